// The dashboard's pages are ES modules (views.js); the frame names this plain script, which adds views.js's script
// element: an added script holds the load event back until it has run, as this file did when it held all the code.
(function () {
  const views = document.createElement('script');
  views.type = 'module';
  views.src = '/dashboard/assets/views.js';
  document.body.append(views);
})();
