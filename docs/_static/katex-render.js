// Typesets the math of the pages (Sphinx's and nbsphinx's \( \) and \[ \]) with KaTeX copied next to this file at
// build time from Debian's libjs-katex (docs/conf.py), so that the site needs no network: Sphinx's default,
// MathJax, would come from a CDN.
(function () {
  var base = document.currentScript.src.replace(/[^\/]*$/, "") + "katex/";
  var css = document.createElement("link");
  css.rel = "stylesheet";
  css.href = base + "katex.min.css";
  document.head.appendChild(css);
  function load(src, then) {
    var s = document.createElement("script");
    s.src = src;
    s.onload = then;
    document.head.appendChild(s);
  }
  load(base + "katex.min.js", function () {
    load(base + "contrib/auto-render.js", function () {
      renderMathInElement(document.body, {
        delimiters: [
          { left: "\\[", right: "\\]", display: true },
          { left: "\\(", right: "\\)", display: false },
          { left: "$$", right: "$$", display: true },
        ],
        throwOnError: false,
      });
    });
  });
})();
