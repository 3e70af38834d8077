// Bureau viewer: the only script. Highlights the steps and world objects a verdict concerns.
(function () {
  function clear() {
    document.querySelectorAll('.highlight').forEach(function (e) { e.classList.remove('highlight'); });
  }
  document.addEventListener('click', function (ev) {
    var a = ev.target.closest ? ev.target.closest('a[data-evidence]') : null;
    if (!a) { return; }
    clear();
    var ids = (a.getAttribute('data-evidence') || '').split(' ');
    ids.forEach(function (id) {
      var el = id && document.getElementById(id);
      if (el) { el.classList.add('highlight'); }
    });
  });
})();
