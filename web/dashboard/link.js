// A one-time link carries its token in the fragment (never sent to a server, logged or leaked by Referer): copy it
// into the form, take it out of the address bar, and submit at once where nothing is asked (a sign-in link).
(function () {
  const token = new URLSearchParams(location.hash.slice(1)).get('token');
  const form = document.querySelector('form[data-link]');
  if (!form || !token) return;
  form.elements.namedItem('token').value = token;
  history.replaceState(null, '', location.pathname);
  if (form.getAttribute('data-link') === 'submit') form.submit();
})();
