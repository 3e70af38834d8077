//! Bureau's web pages in a real browser (issue 17 §3): Debian's Chromium, headless, driven
//! over the DevTools protocol by `support`. Each test writes a screenshot of every page it
//! visits to `$CARGO_TARGET_TMPDIR/browser/<test>/`. Without Chromium the tests fail and say
//! how to install it.

#[path = "browser/support.rs"]
mod support;

#[path = "browser/play.rs"]
mod play;
#[path = "browser/view.rs"]
mod view;

use std::collections::BTreeMap;

use support::Chrome;

/// The driver itself, against a page served here: it must see a console error and an
/// uncaught exception, click, type into an input and a textarea, read text and attributes,
/// follow a link and take a PNG.
#[test]
fn driver_self_check() {
    let pages = BTreeMap::from([
        (
            "/",
            r#"<!doctype html><title>ok</title>
<pre id="h">Hello</pre>
<a id="next" href="/next">next</a>
<input id="name"><textarea id="body"></textarea>
<button id="b" onclick="document.getElementById('h').textContent =
  document.getElementById('name').value + '|' + document.getElementById('body').value">go</button>"#,
        ),
        (
            "/next",
            r#"<!doctype html><title>next</title><p id="p" data-x="7">second page</p>"#,
        ),
        (
            "/bad",
            r#"<!doctype html><title>bad</title><script>console.error("boom");
setTimeout(() => { undefinedFunction(); }, 0);</script><p>bad</p><img src="/missing.png">"#,
        ),
    ]);
    let origin = support::static_server(pages).expect("a local server");
    let chrome = Chrome::launch("driver_self_check").expect("Chromium starts");
    let page = chrome.page().expect("a tab");

    page.goto(&format!("{origin}/")).expect("the page loads");
    page.fill("#name", "Ada").expect("typing into an input");
    page.fill("#body", "two\nlines")
        .expect("typing into a textarea");
    page.click("#b").expect("clicking the button");
    page.wait_until("the heading to change", || {
        Ok(page.text("#h")? == "Ada|two\nlines")
    })
    .expect("the click ran the page's script with what was typed");
    let shot = page.screenshot("form").expect("a screenshot");
    assert!(std::fs::metadata(&shot).expect("the PNG exists").len() > 1000);
    assert_eq!(
        page.attrs("#next", "href").expect("href"),
        [format!("{origin}/next")]
    );
    page.click_to_navigate("#next").expect("following the link");
    assert_eq!(page.text("#p").expect("text"), "second page");
    assert_eq!(page.attrs("#p", "data-x").expect("attribute"), ["7"]);
    page.screenshot("next").expect("a screenshot");
    page.assert_clean("the good pages");
    assert!(
        page.requests()
            .iter()
            .any(|u| u == &format!("{origin}/next")),
        "the navigation was seen as a request: {:?}",
        page.requests()
    );

    page.goto(&format!("{origin}/bad"))
        .expect("the bad page loads");
    page.wait_until("the errors to be reported", || {
        Ok(page.problems().len() >= 4)
    })
    .expect("the bad page's errors are seen");
    let problems = page.problems().join("\n");
    assert!(
        problems.contains("console.error: boom"),
        "console.error seen: {problems}"
    );
    assert!(
        problems.contains("undefinedFunction"),
        "the exception seen: {problems}"
    );
    assert!(
        problems.contains("failed to load <img>"),
        "the broken image seen: {problems}"
    );
    assert!(
        problems.contains("HTTP 404 for"),
        "the 404 seen: {problems}"
    );
}
