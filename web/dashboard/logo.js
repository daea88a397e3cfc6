// The settings page's logo (docs/dashboard.md#links-keys-and-settings): shows the current one as Kassa serves it, and
// for admins uploads a file's bytes (PUT) or removes it (DELETE); the server checks the role, type and size again.
(function () {
  const texts = JSON.parse(document.getElementById('texts').textContent);
  const t = (key) => (key in texts ? texts[key] : key);
  const csrf = document.querySelector('meta[name="kassa-csrf"]').content;
  const path = '/dashboard/api/organisations/' + encodeURIComponent(document.body.dataset.org);
  const current = document.getElementById('logo-current');
  const status = document.getElementById('logo-status');
  const form = document.getElementById('logo-form');
  const remove = document.getElementById('logo-remove');
  const MAX_BYTES = 100 * 1024;

  function show(sha256) {
    if (sha256) {
      const image = document.createElement('img');
      image.src = '/brand/logo/' + sha256;
      image.alt = t('logo.alt');
      image.className = 'logo-preview';
      current.replaceChildren(image);
    } else {
      const none = document.createElement('p');
      none.textContent = t('logo.none');
      current.replaceChildren(none);
    }
    current.dataset.sha256 = sha256 || '';
    if (remove) remove.hidden = !sha256;
  }

  async function send(method, body, type) {
    const headers = { 'X-CSRF-Token': csrf };
    if (type) headers['Content-Type'] = type;
    const response = await fetch(path + '/logo', { method, headers, body });
    const answer = await response.json();
    if (!response.ok) throw new Error([answer.message || response.statusText].flat().join('; '));
    return answer;
  }

  const problem = (error) => {
    const paragraph = document.createElement('p');
    paragraph.className = 'problem';
    paragraph.textContent = error.message;
    status.replaceChildren(paragraph);
  };

  fetch(path + '/settings')
    .then((response) => (response.ok ? response.json() : null))
    .then((settings) => settings && show(settings.logo_sha256))
    .catch(problem);

  if (!form) return;
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    const file = form.elements.namedItem('logo').files[0];
    if (!file) return;
    if (file.size > MAX_BYTES) return problem(new Error(t('logo.tooLarge')));
    send('PUT', file, 'application/octet-stream')
      .then((answer) => {
        show(answer.logo_sha256);
        status.textContent = t('logo.uploaded');
        form.reset();
      })
      .catch(problem);
  });
  remove.addEventListener('click', () => {
    send('DELETE')
      .then((answer) => {
        show(answer.logo_sha256);
        status.textContent = t('logo.removed');
      })
      .catch(problem);
  });
})();
