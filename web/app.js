// The Bao page: draws the board from the JSON API and turns clicks into moves.
// Plain JavaScript, no build step; the API is documented in README ("Playing in the browser").
"use strict";

const SVG = "http://www.w3.org/2000/svg";
const $ = (id) => document.getElementById(id);

// Board geometry (viewBox 720 x 436): 8 columns, North's two rows on top, South's below.
const COL_X = (c) => 80 + c * 80;
const ROW_Y = { b: 85, a: 170, A: 265, B: 350 };
const R = 32;

let info = null;     // GET /api/info
let game = null;     // the game view
let stepIndex = null; // null: the current board; k: the board after step k of the last move (0: before it)
let selected = null; // the hole clicked, waiting for a direction
let busy = false;    // a request is on its way

async function api(method, url, body) {
  const init = { method, headers: {} };
  if (body !== undefined) {
    init.headers["Content-Type"] = "application/json";
    init.body = JSON.stringify(body);
  }
  const res = await fetch(url, init);
  const text = await res.text();
  let data = null;
  try { data = text ? JSON.parse(text) : null; } catch (_) { /* not JSON */ }
  if (!res.ok) throw new Error((data && data.error) || `${res.status} ${res.statusText}`);
  return data;
}

function showError(message) {
  const e = $("error");
  e.textContent = message;
  e.hidden = !message;
}

const sideName = (s) => (s === "S" ? "South" : "North");

// Where hole `name` (e.g. "A5", "b3") is drawn. South's holes run left to right from hole 1;
// North sits across the board, so its hole 1 is on the right as we look.
function holeXY(name) {
  const row = name[0];
  const n = Number(name.slice(1));
  const col = row === "A" || row === "B" ? n - 1 : 8 - n;
  return [COL_X(col), ROW_Y[row]];
}

function seedsOf(board, name) {
  const side = name[0] === "A" || name[0] === "B" ? "S" : "N";
  const rowKey = name[0] === "A" || name[0] === "a" ? "front" : "back";
  return board[side][rowKey][Number(name.slice(1)) - 1];
}

const ownerOf = (name) => (name[0] === "A" || name[0] === "B" ? "S" : "N");

function engineToMove() {
  return game && !game.over && game.engine_side && game.to_move === game.engine_side;
}

function personToMove() {
  return game && !game.over && game.to_move && game.to_move !== game.engine_side;
}

function el(tag, attrs, parent) {
  const e = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, v);
  if (parent) parent.appendChild(e);
  return e;
}

function text(parent, x, y, cls, content) {
  const t = el("text", { x, y, class: cls }, parent);
  t.textContent = content;
  return t;
}

// The board shown now and the holes to highlight.
function shownBoard() {
  const last = game.last;
  if (stepIndex === null || !last) return { board: game.board, marks: {} };
  if (stepIndex === 0) return { board: last.before, marks: {} };
  const step = last.steps[stepIndex - 1];
  const marks = {};
  for (const h of step.sown) marks[h] = "sown";
  if (step.from) marks[step.from] = step.kind === "capture" ? "captured" : "from";
  return { board: step.board, marks };
}

function drawBoard() {
  const svg = $("board");
  svg.replaceChildren();
  const { board, marks } = shownBoard();
  const kiswahili = game.variant === "kiswahili";
  const movable = new Set(personToMove() && stepIndex === null && !busy ? game.legal.map((m) => m.hole) : []);

  el("rect", { x: 30, y: 38, width: 660, height: 356, rx: 18, class: "frame" }, svg);
  el("line", { x1: 40, y1: 217, x2: 680, y2: 217, class: "divider" }, svg);

  for (const side of ["N", "S"]) {
    const who = game.players[side];
    let label = `${sideName(side)} · ${who}`;
    if (kiswahili) label += ` · hand ${board[side].hand}`;
    if (board.carried && game.last && stepIndex !== null && game.last.by === side) label += ` · carrying ${board.carried}`;
    const toMove = game.to_move === side && stepIndex === null;
    text(svg, 36, side === "N" ? 26 : 420, "sidename" + (toMove ? " to-move" : ""), (toMove ? "▶ " : "") + label)
      .setAttribute("data-side", side);
  }

  for (const row of ["b", "a", "A", "B"]) {
    for (let n = 1; n <= 8; n++) {
      const name = row + n;
      const [x, y] = holeXY(name);
      const count = seedsOf(board, name);
      const owner = ownerOf(name);
      const isNyumba = kiswahili && (row === "A" || row === "a") && n === 5;
      const cls = ["hole"];
      if (isNyumba && board[owner].nyumba) cls.push("nyumba-owned");
      if (game.takasia === name && stepIndex === null) cls.push("takasia");
      if (movable.has(name)) cls.push("movable");
      if (selected === name) cls.push("selected");
      if (marks[name]) cls.push(marks[name]);
      const g = el("g", { "data-hole": name, "data-count": count }, svg);
      const shape = isNyumba
        ? el("rect", { x: x - R, y: y - R, width: 2 * R, height: 2 * R, rx: 6 }, g)
        : el("circle", { cx: x, cy: y, r: R }, g);
      shape.setAttribute("class", cls.join(" "));
      drawSeeds(g, x, y, count);
      text(g, x, y + 8, "count", String(count));
      text(g, x, y + 26, "label", name);
      if (game.takasia === name && stepIndex === null) text(g, x + R - 6, y - R + 10, "tk", "T");
      if (movable.has(name)) {
        g.style.cursor = "pointer";
        g.addEventListener("click", () => pickHole(name));
      }
    }
  }
  if (selected) drawArrows(svg);
}

// A few seeds drawn faintly around the count (over the top, clear of the label below), so
// that full holes look full.
function drawSeeds(g, x, y, count) {
  const shown = Math.min(count, 10);
  for (let i = 0; i < shown; i++) {
    const a = ((160 + (220 * (i + 0.5)) / shown) * Math.PI) / 180;
    el("circle", { cx: x + 21 * Math.cos(a), cy: y + 21 * Math.sin(a), r: 4.5, class: "seed" }, g);
  }
}

function candidates(hole) {
  return game.legal.filter((m) => m.hole === hole);
}

// `L`/`R` as the mover sees it; on screen, North's left is our right.
function screenRight(way) {
  return (game.to_move === "S") === (way === "R");
}

function drawArrows(svg) {
  const [x, y] = holeXY(selected);
  const ways = [...new Set(candidates(selected).map((m) => m.way))];
  for (const way of ways) {
    const right = screenRight(way);
    const ax = x + (right ? 1 : -1) * (R + 10);
    const g = el("g", { class: "arrow", "data-way": way }, svg);
    el("circle", { cx: ax, cy: y, r: 16 }, g);
    const d = right ? `M ${ax - 6} ${y - 9} L ${ax + 9} ${y} L ${ax - 6} ${y + 9} Z` : `M ${ax + 6} ${y - 9} L ${ax - 9} ${y} L ${ax + 6} ${y + 9} Z`;
    el("path", { d }, g);
    const t = el("title", {}, g);
    t.textContent = wayTitle(selected, way);
    g.addEventListener("click", (ev) => { ev.stopPropagation(); pickWay(way); });
  }
}

function kichwaName(side, way) {
  return (side === "S" ? "A" : "a") + (way === "L" ? "1" : "8");
}

function wayTitle(hole, way) {
  const cands = candidates(hole).filter((m) => m.way === way);
  if (cands.length && cands[0].kind === "namua-capture") return `captured seeds enter at ${kichwaName(game.to_move, way)}`;
  return `${hole}${way}`;
}

function pickHole(name) {
  showError("");
  selected = selected === name ? null : name;
  hideChoice();
  if (selected) {
    const cands = candidates(selected);
    const ways = [...new Set(cands.map((m) => m.way))];
    if (cands[0].kind === "namua-capture" && ways.length > 1) {
      ask(`${selected} captures. Where do the captured seeds enter?`, ways.map((w) => ({
        label: `at the kichwa ${kichwaName(game.to_move, w)} (${w === "L" ? "left" : "right"})`,
        choice: w,
        act: () => pickWay(w),
      })));
    }
  }
  render();
}

function pickWay(way) {
  const cands = candidates(selected).filter((m) => m.way === way);
  hideChoice();
  if (cands.length > 1) {
    const stop = cands.find((m) => !m.safari);
    const safari = cands.find((m) => m.safari);
    ask("If the lap ends in your nyumba: stop there, or go on safari?", [
      { label: "Stop in the nyumba", choice: "stop", act: () => play(stop.notation) },
      { label: "Go on safari", choice: "safari", act: () => play(safari.notation) },
    ]);
    return;
  }
  play(cands[0].notation);
}

function ask(question, options) {
  $("choice-question").textContent = question;
  const box = $("choice-buttons");
  box.replaceChildren();
  for (const o of options) {
    const b = document.createElement("button");
    b.textContent = o.label;
    b.dataset.choice = o.choice;
    b.addEventListener("click", o.act);
    box.appendChild(b);
  }
  $("choice").hidden = false;
}

function hideChoice() {
  $("choice").hidden = true;
}

function statusText() {
  if (game.over) {
    const how = game.over.reason === "front-empty" ? "the opponent's front row is empty" : "the opponent has no move";
    return `${sideName(game.over.winner)} wins: ${how}.`;
  }
  const side = sideName(game.to_move);
  if (busy && game.to_move === game.engine_side) return `${side} (${game.engine}) is thinking…`;
  let s = game.engine_side === null ? `${side} to move.` : personToMove() ? `Your move (${side}).` : `${side} (engine) to move.`;
  if (game.takasia) s += ` ${game.takasia} is takasia'd for this move.`;
  return s;
}

function drawSteps() {
  const last = game.last;
  $("steps").hidden = !last;
  if (!last) return;
  const total = last.steps.length;
  const k = stepIndex === null ? total : stepIndex;
  $("steps-title").textContent = `Last move: ${last.notation} by ${sideName(last.by)}`;
  $("step-count").textContent = `${k} / ${total}`;
  $("step-text").textContent = k === 0 ? "The board before the move." : last.steps[k - 1].text;
  $("step-first").disabled = k === 0;
  $("step-prev").disabled = k === 0;
  $("step-next").disabled = k === total;
  $("step-last").disabled = stepIndex === null;
}

function setStep(k) {
  const total = game.last ? game.last.steps.length : 0;
  stepIndex = k >= total ? null : Math.max(0, k);
  selected = null;
  hideChoice();
  render();
}

function describeNote(note, title) {
  const box = $("engine-text");
  box.replaceChildren();
  const head = document.createElement("div");
  head.innerHTML = "";
  head.textContent = `${title} — ${note.engine}`;
  box.appendChild(head);
  if (note.win_probability !== null && note.win_probability !== undefined) {
    const wp = document.createElement("div");
    const b = document.createElement("span");
    b.className = "wp";
    b.textContent = `${Math.round(100 * note.win_probability)}%`;
    wp.append("win probability for ", sideName(note.side), ": ", b);
    box.appendChild(wp);
  }
  if (note.top && note.top.length) {
    const top = note.top.map((m) => {
      let s = m.notation;
      if (m.visits !== null && m.visits !== undefined) s += ` ${m.visits} visit${m.visits === 1 ? "" : "s"}`;
      if (m.score !== null && m.score !== undefined) s += ` ${m.score >= 0 ? "+" : ""}${m.score.toFixed(2)}`;
      return s;
    });
    const d = document.createElement("div");
    d.textContent = `top moves: ${top.join(", ")}`;
    box.appendChild(d);
  }
  if (note.pv && note.pv.length > 1) {
    const d = document.createElement("div");
    d.textContent = `expected line: ${note.pv.join(" ")}`;
    box.appendChild(d);
  }
  const extra = [];
  if (note.depth !== null && note.depth !== undefined) extra.push(`depth ${note.depth}`);
  if (note.nodes !== null && note.nodes !== undefined) extra.push(`${note.nodes} nodes`);
  if (extra.length) {
    const d = document.createElement("div");
    d.textContent = extra.join(", ");
    box.appendChild(d);
  }
  $("engine").hidden = false;
}

function drawMoves() {
  const list = $("movelist");
  list.replaceChildren();
  for (let i = 0; i < game.moves.length; i += 2) {
    const li = document.createElement("li");
    li.textContent = game.moves.slice(i, i + 2).map((m) => m.notation).join("  ");
    list.appendChild(li);
  }
  list.scrollTop = list.scrollHeight;
}

function render() {
  if (!game) return;
  $("status").textContent = statusText();
  $("status").className = game.over ? "over" : "";
  drawBoard();
  drawSteps();
  drawMoves();
  $("undo").disabled = busy || game.moves.length === 0;
  $("hint").disabled = busy || !!game.over || !info || info.engines[game.variant].length === 0;
  // After a failed engine move (say, over its time) the engine's turn can be asked again.
  $("hint").textContent = engineToMove() ? "Let the engine move" : "Ask the engine";
  $("download").href = `/api/games/${game.id}/record`;
  document.body.dataset.version = String(game.version);
  document.body.dataset.busy = busy ? "1" : "0";
  document.body.dataset.plies = String(game.moves.length);
}

function setGame(g) {
  game = g;
  stepIndex = null;
  selected = null;
  hideChoice();
  if (game.last && game.last.engine) describeNote(game.last.engine, `${sideName(game.last.by)} played ${game.last.notation}`);
  render();
}

async function request(work) {
  busy = true;
  render();
  try {
    await work();
    showError("");
  } catch (e) {
    showError(e.message);
  } finally {
    busy = false;
    render();
  }
}

async function play(notation) {
  await request(async () => setGame(await api("POST", `/api/games/${game.id}/moves`, { move: notation })));
  await engineTurn();
}

async function engineTurn() {
  if (!engineToMove()) return;
  await request(async () => {
    const r = await api("POST", `/api/games/${game.id}/engine`, { play: true });
    setGame(r.game);
  });
}

function fillOpponents() {
  const variant = $("variant").value;
  const sel = $("opponent");
  sel.replaceChildren();
  for (const name of info.engines[variant]) {
    const o = document.createElement("option");
    o.value = name;
    o.textContent = name;
    sel.appendChild(o);
  }
  const o = document.createElement("option");
  o.value = "human";
  o.textContent = "two people (no engine)";
  sel.appendChild(o);
}

async function newGame() {
  const opponent = $("opponent").value;
  const body = { variant: $("variant").value, opponent };
  if (opponent !== "human") body.engine_side = $("side").value === "S" ? "N" : "S";
  $("engine").hidden = true;
  await request(async () => setGame(await api("POST", "/api/games", body)));
  await engineTurn();
}

function wire() {
  $("variant").addEventListener("change", fillOpponents);
  $("new-game").addEventListener("submit", (e) => { e.preventDefault(); newGame(); });
  $("undo").addEventListener("click", () => request(async () => setGame(await api("POST", `/api/games/${game.id}/undo`))));
  $("hint").addEventListener("click", () => {
    if (engineToMove()) return engineTurn();
    return request(async () => {
      const r = await api("POST", `/api/games/${game.id}/engine`, { play: false });
      describeNote(r.analysis, `Suggestion: ${r.move}`);
    });
  });
  $("typed").addEventListener("submit", (e) => {
    e.preventDefault();
    const m = $("typed-move").value.trim();
    if (!m || !game) return;
    $("typed-move").value = "";
    play(m);
  });
  $("step-first").addEventListener("click", () => setStep(0));
  $("step-prev").addEventListener("click", () => setStep((stepIndex === null ? game.last.steps.length : stepIndex) - 1));
  $("step-next").addEventListener("click", () => setStep((stepIndex === null ? game.last.steps.length : stepIndex) + 1));
  $("step-last").addEventListener("click", () => setStep(Infinity));
  $("board").addEventListener("click", (e) => {
    if (e.target === $("board") && selected) { selected = null; hideChoice(); render(); }
  });
}

async function start() {
  wire();
  try {
    info = await api("GET", "/api/info");
  } catch (e) {
    $("status").textContent = "The server does not answer.";
    showError(e.message);
    return;
  }
  fillOpponents();
  await newGame();
}

start();
