// Runs inside the embedded QuickJS context (one per Python thread). Python keeps the handles.
"use strict";
var R = [];
var NG = [];

function compile(pattern, flags) {
  var re = new RegExp(pattern, flags);
  R.push(re);
  NG.push(new RegExp(re.source + "|", flags.replace("y", "")).exec("").length - 1);
  return R.length - 1;
}

function groupCount(h) {
  return NG[h];
}

function test(h, s) {
  var re = R[h];
  re.lastIndex = 0;
  var found = re.test(s);
  re.lastIndex = 0;
  return found;
}

// [[start, end], ...] in UTF-16 units: every match with `g`, the first one without.
function spans(h, s) {
  var re = R[h];
  var out = [];
  if (!re.global) {
    var one = re.exec(s);
    if (one) out.push([one.index, one.index + one[0].length]);
    return JSON.stringify(out);
  }
  re.lastIndex = 0;
  var m;
  while ((m = re.exec(s)) !== null) {
    out.push([m.index, m.index + m[0].length]);
    if (m[0].length === 0) re.lastIndex = advance(s, re.lastIndex, re.unicode);
  }
  re.lastIndex = 0;
  return JSON.stringify(out);
}

function advance(s, i, unicode) {
  if (!unicode || i + 1 >= s.length) return i + 1;
  var c = s.charCodeAt(i);
  if (c >= 0xd800 && c <= 0xdbff) {
    var d = s.charCodeAt(i + 1);
    if (d >= 0xdc00 && d <= 0xdfff) return i + 2;
  }
  return i + 1;
}

// A value inserted into the replacement loses every trim string; absent and empty groups insert "".
function clean(value, trims) {
  if (!value) return "";
  for (var i = 0; i < trims.length; i++) {
    if (trims[i]) value = value.split(trims[i]).join("");
  }
  return value;
}

// tokens: a literal string, a group number (0 = the whole match), or [name] for a named group.
function build(a, ng, named, tokens, trims) {
  var pieces = "";
  for (var i = 0; i < tokens.length; i++) {
    var t = tokens[i];
    if (typeof t === "string") pieces += t;
    else if (typeof t === "number") pieces += t <= ng ? clean(a[t], trims) : "";
    else pieces += named ? clean(named[t[0]], trims) : "";
  }
  return pieces;
}

function replaceOne(h, s, tokens, trims) {
  var re = R[h];
  var ng = NG[h];
  re.lastIndex = 0;
  var out = s.replace(re, function () {
    var a = arguments;
    return build(a, ng, a.length > ng + 3 ? a[ng + 3] : undefined, tokens, trims);
  });
  re.lastIndex = 0;
  return out;
}

// The same result as replaceOne, trying match starts one by one with the sticky twin `hs`:
// - never past `limit`: every match holds one literal of each requirement, so none can start after
//   the last occurrence of a requirement's literals (no quadratic tail for `(.*?</think>)`);
// - only where `prefix` occurs, when every match starts with it (QuickJS does not skip ahead).
function replaceStarts(h, hs, s, tokens, trims, requirements, prefix) {
  var limit = s.length;
  for (var r = 0; r < requirements.length; r++) {
    var found = -1;
    for (var k = 0; k < requirements[r].length; k++) found = Math.max(found, s.lastIndexOf(requirements[r][k]));
    limit = Math.min(limit, found);
  }
  if (limit < 0) return s;
  var re = R[hs];
  var ng = NG[h];
  var global = R[h].global;
  var unicode = R[h].unicode;
  var out = [];
  var last = 0;
  var i = 0;
  while (i <= limit) {
    if (prefix) {
      i = s.indexOf(prefix, i);
      if (i < 0 || i > limit) break;
    }
    re.lastIndex = i;
    var m = re.exec(s);
    if (m === null) {
      i = advance(s, i, unicode);
      continue;
    }
    out.push(s.slice(last, m.index), build(m, ng, m.groups, tokens, trims));
    last = m.index + m[0].length;
    if (!global) break;
    i = m[0].length ? last : advance(s, last, unicode);
  }
  re.lastIndex = 0;
  if (last === 0 && out.length === 0) return s;
  out.push(s.slice(last));
  return out.join("");
}

function replaceStartsJson(h, hs, s, tokens, trims, requirements, prefix) {
  return replaceStarts(h, hs, s, JSON.parse(tokens), JSON.parse(trims), JSON.parse(requirements), prefix);
}

function replaceJson(h, s, tokens, trims) {
  return replaceOne(h, s, JSON.parse(tokens), JSON.parse(trims));
}
