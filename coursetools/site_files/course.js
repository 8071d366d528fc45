/* The course site's own script, on top of sphinx-book-theme: a few lines, nothing fetched.

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
  // A tap on a link in the sidebar dialogs (a section of this page, another chapter) closes the
  // dialog, so the reader sees where it led.
  for (const dialog of document.querySelectorAll("#pst-primary-sidebar-modal, #pst-secondary-sidebar-modal")) {
    dialog.addEventListener("click", (event) => {
      if (event.target.closest("a[href]")) dialog.close();
    });
  }
});
