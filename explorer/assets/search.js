// The page's own parameters, shared by the explorer's script (app.js) and the coach's
// (coach.js): put inline before either by explorer/src/page.rs.
'use strict';

/** The page's own parameters; a '+' stays a '+' (a base64 token holds them). */
function readSearch(search) {
  const out = {};
  for (const piece of search.replace(/^\?/, '').split('&')) {
    if (!piece) continue;
    const at = piece.indexOf('=');
    try {
      const key = decodeURIComponent(at < 0 ? piece : piece.slice(0, at));
      out[key] = at < 0 ? '' : decodeURIComponent(piece.slice(at + 1));
    } catch (e) {
      // a malformed escape: the parameter is ignored
    }
  }
  return out;
}
