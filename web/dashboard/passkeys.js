// Passkeys (docs/dashboard.md#passkeys) with the browser's own navigator.credentials: the server's options (base64url
// fields) become ArrayBuffers for the browser, and the browser's credential becomes JSON for the server.
(function () {
  if (!window.PublicKeyCredential || !navigator.credentials) return;
  const status = document.getElementById('passkey-status');

  const bytes = (text) => {
    const base64 = text.replace(/-/g, '+').replace(/_/g, '/');
    const binary = atob(base64 + '='.repeat((4 - (base64.length % 4)) % 4));
    return Uint8Array.from(binary, (char) => char.charCodeAt(0)).buffer;
  };
  const text = (buffer) => {
    let binary = '';
    for (const byte of new Uint8Array(buffer)) binary += String.fromCharCode(byte);
    return btoa(binary).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
  };
  const withIds = (list) => (list || []).map((item) => ({ ...item, id: bytes(item.id) }));

  /** The credential as the server reads it (the shape of PublicKeyCredential.toJSON()). */
  function credentialJson(credential) {
    const response = credential.response;
    const json = { clientDataJSON: text(response.clientDataJSON) };
    if (response.attestationObject) {
      json.attestationObject = text(response.attestationObject);
      json.transports = response.getTransports ? response.getTransports() : [];
    } else {
      json.authenticatorData = text(response.authenticatorData);
      json.signature = text(response.signature);
      if (response.userHandle) json.userHandle = text(response.userHandle);
    }
    return {
      id: credential.id,
      rawId: text(credential.rawId),
      type: credential.type,
      response: json,
      clientExtensionResults: credential.getClientExtensionResults(),
      authenticatorAttachment: credential.authenticatorAttachment || undefined,
    };
  }

  async function post(path, body, csrf) {
    const headers = { 'Content-Type': 'application/json' };
    if (csrf) headers['X-CSRF-Token'] = csrf;
    const response = await fetch(path, { method: 'POST', headers, body: JSON.stringify(body || {}) });
    const answer = response.status === 204 ? {} : await response.json();
    if (!response.ok) throw new Error([answer.message || response.statusText].flat().join('; '));
    return answer;
  }

  const failed = (error) => {
    // The person closing the browser's dialog is no error worth a message.
    status.textContent = error && error.name === 'NotAllowedError' ? 'No passkey was used.' : String(error.message);
  };

  const signIn = document.getElementById('passkey-sign-in');
  if (signIn) {
    signIn.hidden = false;
    document.getElementById('passkey-button').addEventListener('click', async () => {
      status.textContent = 'Waiting for your passkey…';
      try {
        const options = await post('/dashboard/passkeys/sign-in-options');
        const publicKey = { ...options, challenge: bytes(options.challenge) };
        publicKey.allowCredentials = withIds(options.allowCredentials);
        const credential = await navigator.credentials.get({ publicKey });
        await post('/dashboard/passkeys/sign-in', { credential: credentialJson(credential) });
        location.assign('/dashboard');
      } catch (error) {
        failed(error);
      }
    });
  }

  const add = document.getElementById('add-passkey');
  if (add) {
    add.hidden = false;
    const csrf = add.elements.namedItem('csrf_token').value;
    add.addEventListener('submit', async (event) => {
      event.preventDefault();
      status.textContent = 'Waiting for your authenticator…';
      try {
        const options = await post('/dashboard/api/passkeys/registration-options', {}, csrf);
        const publicKey = {
          ...options,
          challenge: bytes(options.challenge),
          user: { ...options.user, id: bytes(options.user.id) },
          excludeCredentials: withIds(options.excludeCredentials),
        };
        const credential = await navigator.credentials.create({ publicKey });
        const name = add.elements.namedItem('name').value;
        await post('/dashboard/api/passkeys', { name, credential: credentialJson(credential) }, csrf);
        location.reload();
      } catch (error) {
        failed(error);
      }
    });
  }
})();
