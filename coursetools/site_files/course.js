/* The course site's own script, on top of sphinx-book-theme: a few lines, nothing fetched from
   elsewhere.

   Navigation at every width (pydata-sphinx-theme#2451): pydata-sphinx-theme, and sphinx-book-theme's
   wide-screen fix, bind their handlers to the *first* `.primary-toggle` and `.secondary-toggle` of
   the page (document.querySelector), which is the theme header's, hidden under sphinx-book-theme;
   the buttons a reader sees (the article's ☰ and contents icons) had no handler and only showed a
   tooltip. A click on any other toggle is passed on to the one the theme bound, so it opens the
   chapters (or the page's contents) as a dialog on a narrow screen and folds the sidebar on a wide
   one, as the theme meant. */
document.addEventListener("DOMContentLoaded", () => {
  for (const kind of [".primary-toggle", ".secondary-toggle"]) {
    const [bound, ...others] = document.querySelectorAll(kind);
    for (const button of others) {
      button.addEventListener("click", (event) => {
        event.preventDefault();
        event.stopPropagation();
        button.blur(); // no tooltip left over the dialog
        bound.click();
      });
    }
  }
  // A plot in a cell's output opens at its full size when tapped, in a dialog that scrolls (and
  // pinch-zooms on a phone); a tap or Escape closes it. (A plot is often an inline data: image,
  // which a browser will not open in a tab of its own.)
  const viewer = document.createElement("dialog");
  viewer.className = "course-image-viewer";
  viewer.addEventListener("click", () => viewer.close());
  document.body.append(viewer);
  for (const image of document.querySelectorAll("div.cell_output img")) {
    image.classList.add("course-zoomable");
    image.title = "Tap to see it full size";
    image.tabIndex = 0;
    const open = () => {
      const big = document.createElement("img");
      big.src = image.src;
      big.alt = image.alt;
      viewer.replaceChildren(big);
      viewer.showModal();
    };
    image.addEventListener("click", open);
    image.addEventListener("keydown", (event) => event.key === "Enter" && open());
  }
  // A tap on a link in the sidebar dialogs (a section of this page, another chapter) closes the
  // dialog, so the reader sees where it led.
  for (const dialog of document.querySelectorAll("#pst-primary-sidebar-modal, #pst-secondary-sidebar-modal")) {
    dialog.addEventListener("click", (event) => {
      if (event.target.closest("a[href]")) dialog.close();
    });
  }
});

/* Search results quote the lesson. Sphinx's search page takes a result's snippet from the page's
   [role="main"] element, which pydata-sphinx-theme puts around the article *and* its buttons, page
   contents and footer: a match near the top showed "System Settings Light Dark" and section titles.
   The snippet is taken from the article alone, without copy buttons and the run facts. */
document.addEventListener("DOMContentLoaded", () => {
  if (typeof Search === "undefined" || !Search.htmlToText) return; // not the search page
  const theirs = Search.htmlToText;
  Search.htmlToText = (htmlString, anchor) => {
    const doc = new DOMParser().parseFromString(htmlString, "text/html");
    const article = doc.querySelector("article.bd-article");
    if (!article) return theirs(htmlString, anchor);
    const junk = ".headerlink, script, style, button, details.course-run-info, .course-widget-note";
    article.querySelectorAll(junk).forEach((el) => el.remove());
    const part = (anchor && article.querySelector(anchor)) || article;
    return part.textContent.replace(/\s+/g, " ").trim();
  };
});
