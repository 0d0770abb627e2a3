import { test } from "node:test";
import assert from "node:assert/strict";
import { add, average, discount } from "../src/calc.js";

test("add", () => assert.equal(add(2, 3), 5));
test("average of three", () => assert.equal(average([2, 4, 6]), 4));
test("average of none", () => assert.equal(average([]), 0));
test("discount", () => assert.equal(discount(200, 15), 170));
