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
function replaceOne(h, s, tokens, trims) {
  var re = R[h];
  var ng = NG[h];
  re.lastIndex = 0;
  var out = s.replace(re, function () {
    var a = arguments;
    var named = a.length > ng + 3 ? a[ng + 3] : undefined;
    var pieces = "";
    for (var i = 0; i < tokens.length; i++) {
      var t = tokens[i];
      if (typeof t === "string") pieces += t;
      else if (typeof t === "number") pieces += t <= ng ? clean(a[t], trims) : "";
      else pieces += named ? clean(named[t[0]], trims) : "";
    }
    return pieces;
  });
  re.lastIndex = 0;
  return out;
}

function replaceJson(h, s, tokens, trims) {
  return replaceOne(h, s, JSON.parse(tokens), JSON.parse(trims));
}
