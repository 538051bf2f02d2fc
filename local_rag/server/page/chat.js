"use strict";
/* local-rag's chat page, served at / by `local-rag serve` (docs/server.md, "The chat page").

   It talks to the server's own API only: GET /healthz, GET /v1/models, POST /v1/chat/completions with stream: true,
   the whole conversation in each request as any OpenAI client sends it. Nothing is fetched from elsewhere (the
   server's Content-Security-Policy forbids it), and what the model or the documents say is put in the page as text,
   never as HTML. The conversations are kept in this browser (localStorage, the last 50: History lists them, Delete
   forgets one); the API key only in this tab (sessionStorage: closing the tab forgets it). */

const KEY = "local-rag.key";
const CHATS = "local-rag.chats"; /* localStorage: the conversations of this browser, newest first */
const CURRENT = "local-rag.current"; /* sessionStorage: the conversation this tab shows */
const MAX_CHATS = 50;
const $ = (id) => document.getElementById(id);

/* turns: {role: "user" | "assistant", content, extra (the final chunk's local_rag field), error} */
const chat = { id: sessionStorage.getItem(CURRENT) || newId(), turns: [], controller: null, about: "", store: "",
               listed: false };
chat.turns = (chats().find((c) => c.id === chat.id) || { turns: [] }).turns;
const MAX_LISTED = 2000; /* documents offered under Only (the vector store files API, 100 a page) */

function newId() {
  return `${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 8)}`;
}

function chats() {
  try {
    const list = JSON.parse(localStorage.getItem(CHATS) || "[]");
    return Array.isArray(list) ? list.filter((c) => c && c.id && Array.isArray(c.turns)) : [];
  } catch {
    return [];
  }
}

/* The conversation into this browser's history (the oldest dropped past MAX_CHATS, or while storage is full). */
function save() {
  sessionStorage.setItem(CURRENT, chat.id);
  let list = chats().filter((c) => c.id !== chat.id);
  if (chat.turns.length) {
    const first = chat.turns.find((t) => t.role === "user");
    list.unshift({ id: chat.id, title: first ? first.content.slice(0, 80) : "", updated: Date.now(), turns: chat.turns });
  }
  list = list.slice(0, MAX_CHATS);
  for (;;) {
    try {
      localStorage.setItem(CHATS, JSON.stringify(list));
      break;
    } catch {
      if (list.length <= 1) break; /* storage full even for this one: it goes on, unsaved */
      list.pop();
    }
  }
  listChats(list);
}

function listChats(list) {
  const select = $("history");
  select.replaceChildren(el("option", "", list.length ? `History (${list.length})` : "History"));
  select.firstChild.value = "";
  for (const c of list) {
    const when = new Date(c.updated).toLocaleString([], { dateStyle: "short", timeStyle: "short" });
    const option = el("option", "", `${c.title || "(empty)"} · ${when}`);
    option.value = c.id;
    select.append(option);
  }
  select.value = "";
  $("delete").disabled = !list.some((c) => c.id === chat.id);
}

function openChat(id) {
  stop();
  chat.id = id;
  chat.turns = (chats().find((c) => c.id === id) || { turns: [] }).turns;
  sessionStorage.setItem(CURRENT, chat.id);
  renderAll();
  listChats(chats());
  status("");
  $("question").focus();
}

function el(tag, className, text) {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text !== undefined) node.textContent = text;
  return node;
}

function status(text, isError) {
  const line = $("status");
  line.textContent = text || "";
  line.className = isError ? "error" : "muted";
}

/* ------------------------------------------------------------------ the server */

class ServerError extends Error {
  constructor(code, message, retryAfter) {
    super(message);
    this.code = code;
    this.retryAfter = retryAfter;
  }
}

function headers() {
  const out = { "Content-Type": "application/json" };
  const key = sessionStorage.getItem(KEY);
  if (key) out.Authorization = `Bearer ${key}`;
  return out;
}

async function failure(response) {
  let message = `${response.status} ${response.statusText}`;
  try {
    const body = await response.json();
    if (body && body.error && body.error.message) message = body.error.message;
  } catch {
    /* not JSON: the status line says it */
  }
  return new ServerError(response.status, message, response.headers.get("Retry-After"));
}

async function getJSON(path) {
  const response = await fetch(path, { headers: headers() });
  if (!response.ok) throw await failure(response);
  return response.json();
}

function describe(error) {
  if (error.name === "AbortError") return "Stopped.";
  if (error instanceof TypeError) return "The server does not answer (is `local-rag serve` still running?)";
  if (error.code === 429) return `The server is busy with other questions: try again in ${error.retryAfter || "a few"} s.`;
  return error.message;
}

/* Server-sent events: calls on.status(line), on.piece(text) and on.final(extra) as the stream goes. */
async function readStream(response, on) {
  const reader = response.body.getReader();
  const decoder = new TextDecoder();
  let buffer = "";
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    buffer += decoder.decode(value, { stream: true });
    let cut;
    while ((cut = buffer.indexOf("\n\n")) >= 0) {
      const event = buffer.slice(0, cut);
      buffer = buffer.slice(cut + 2);
      const data = event.split("\n").filter((l) => l.startsWith("data:")).map((l) => l.slice(5).trim()).join("\n");
      if (!data) continue;
      if (data === "[DONE]") return;
      const chunk = JSON.parse(data);
      if (chunk.error) throw new ServerError(chunk.error.code, chunk.error.message);
      const extra = chunk.local_rag;
      const choice = chunk.choices && chunk.choices[0];
      if (extra && extra.status) on.status(extra.status);
      if (choice && choice.delta && choice.delta.content) on.piece(choice.delta.content);
      if (choice && choice.finish_reason) on.final(extra || {});
    }
  }
  throw new ServerError(0, "The answer broke off: the server closed the stream before its end.");
}

/* ------------------------------------------------------------------ text with citations */

const INLINE = /(\[\d+(?:\s*,\s*\d+)*\])|`([^`\n]+)`|\*\*([^*\n]+)\*\*/g;

function inline(parent, text, onCite) {
  let last = 0;
  for (const m of text.matchAll(INLINE)) {
    parent.append(text.slice(last, m.index));
    if (m[1]) {
      for (const n of m[1].slice(1, -1).split(",")) {
        const link = el("a", "cite", `[${n.trim()}]`);
        link.href = "#";
        link.dataset.n = n.trim();
        link.addEventListener("click", (event) => { event.preventDefault(); onCite(Number(n)); });
        parent.append(link);
      }
    } else if (m[2]) {
      parent.append(el("code", "", m[2]));
    } else {
      parent.append(el("strong", "", m[3]));
    }
    last = m.index + m[0].length;
  }
  parent.append(text.slice(last));
}

/* Paragraphs, lists, code blocks, `code`, **bold** and [n] citations: the Markdown small models write. */
function renderText(parent, text, onCite) {
  text.split("```").forEach((block, i) => {
    if (i % 2) {
      const pre = el("pre");
      pre.append(el("code", "", block.replace(/^[^\n]*\n/, "")));
      parent.append(pre);
      return;
    }
    for (const para of block.split(/\n\s*\n/)) {
      const lines = para.split("\n").filter((l) => l.trim());
      if (!lines.length) continue;
      const item = /^\s*(?:[-*•]|\d+[.)])\s+/;
      if (lines.every((l) => item.test(l))) {
        const list = el(/^\s*\d/.test(lines[0]) ? "ol" : "ul");
        for (const line of lines) {
          const li = el("li");
          inline(li, line.replace(item, ""), onCite);
          list.append(li);
        }
        parent.append(list);
      } else {
        const p = el("p");
        lines.forEach((line, k) => {
          if (k) p.append(el("br"));
          inline(p, line, onCite);
        });
        parent.append(p);
      }
    }
  });
}

/* ------------------------------------------------------------------ the conversation */

const KINDS = { decline: "not in the documents", clarify: "a question back" };

function showSource(node, n) {
  const found = node.querySelector(`details[data-numbers~="${n}"]`);
  if (!found) return;
  found.open = true;
  found.scrollIntoView({ block: "nearest" });
  found.classList.add("flash");
  setTimeout(() => found.classList.remove("flash"), 1200);
}

function renderSources(node, sources) {
  if (!sources || !sources.lines || !sources.lines.length) return;
  const box = el("div", "sources");
  box.append(el("div", "muted", sources.heading ? `Sources (${sources.heading}):` : "Sources:"));
  for (const line of sources.lines) {
    const details = el("details");
    details.dataset.numbers = line.numbers.join(" ");
    const summary = el("summary", "", `${line.numbers.map((n) => `[${n}]`).join("")} ${line.label}`);
    if (line.baseless) summary.append(el("span", "error", " (cited, but shares no word with the sentence citing it)"));
    details.append(summary);
    for (const passage of line.passages || []) {
      if (passage.text) details.append(el("blockquote", "", passage.text));
    }
    if (line.document && chat.store && /^file:/.test(line.url)) { /* a file of a folder: it can be read again */
      const whole = el("button", "whole", "Read the whole document");
      whole.type = "button";
      whole.addEventListener("click", () => readDocument(line.document, line.label,
        (line.passages || []).map((p) => p.text).filter(Boolean)));
      details.append(whole);
    }
    if (line.url) {
      const where = el("div", "where");
      if (/^https?:\/\//.test(line.url)) {
        const link = el("a", "", line.url);
        link.href = line.url;
        link.target = "_blank";
        link.rel = "noopener noreferrer";
        where.append(link);
      } else {
        where.textContent = line.url; /* file:// links do not open from a web page: the path, to copy */
      }
      details.append(where);
    }
    box.append(details);
  }
  node.append(box);
}

function renderAnswer(node, turn, live) {
  node.replaceChildren();
  const extra = turn.extra;
  if (extra && KINDS[extra.kind]) node.append(el("span", "kind", KINDS[extra.kind]));
  const body = el("div", "text");
  if (turn.content) renderText(body, turn.content, (n) => showSource(node, n));
  else if (live) body.append(el("p", "waiting", turn.status || "Searching…"));
  node.append(body);
  if (extra && extra.kind === "clarify" && extra.decision && extra.decision.options && extra.decision.options.length) {
    const options = el("div", "options");
    for (const option of extra.decision.options) {
      const button = el("button", "option", option);
      button.type = "button";
      button.addEventListener("click", () => ask(option));
      options.append(button);
    }
    node.append(options);
  }
  if (extra) {
    renderSources(node, extra.sources);
    const total = extra.timings_s && extra.timings_s.total;
    const meta = [];
    if (total) meta.push(`${total.toFixed(1)} s`);
    if (extra.passages) meta.push(`${extra.passages.length} passage${extra.passages.length === 1 ? "" : "s"} read`);
    const rewrite = (extra.queries || []).find((q) => q.mode === "rewrite");
    if (rewrite && rewrite.text.trim() !== (turn.question || "").trim()) meta.push(`searched for “${rewrite.text}”`);
    if (extra.messages_cut) meta.push(`a message was cut to ${extra.messages_cut.to_chars} characters`);
    if (meta.length) node.append(el("div", "meta", meta.join(" · ")));
  }
  if (turn.error) node.append(el("p", "error", turn.error));
  if (!live) actions(node, turn);
}

/* Copy (the answer and its sources, as text), and Retry for the last question when its answer failed. */
function actions(node, turn) {
  const row = el("div", "actions");
  if (turn.content) {
    const copy = el("button", "copy", "Copy");
    copy.type = "button";
    copy.addEventListener("click", () => copyText(answerText(turn)));
    row.append(copy);
  }
  const at = chat.turns.indexOf(turn);
  if (turn.error && at === chat.turns.length - 1 && at > 0) {
    const retry = el("button", "retry", "Retry");
    retry.type = "button";
    retry.addEventListener("click", () => {
      if (chat.controller) return;
      const question = chat.turns[at - 1].content;
      chat.turns.splice(at - 1, 2);
      renderAll();
      ask(question);
    });
    row.append(retry);
  }
  if (row.children.length) node.append(row);
}

function answerText(turn) {
  return [turn.content.trim(), ...sourceLines(turn, "", false)].join("\n");
}

/* A blank line, "Sources:" and a line per source ("[1][3] Title (file.md)"; with ``links``, "- " before it and its
   address after), or nothing when the turn has no sources: what Copy and Save write. */
function sourceLines(turn, bullet, links) {
  const sources = turn.extra && turn.extra.sources;
  if (!sources || !sources.lines || !sources.lines.length) return [];
  return ["", sources.heading ? `Sources (${sources.heading}):` : "Sources:", ...sources.lines.map((line) =>
    `${bullet}${line.numbers.map((n) => `[${n}]`).join("")} ${line.label}${links && line.url ? ` <${line.url}>` : ""}`)];
}

async function copyText(text) {
  try {
    await navigator.clipboard.writeText(text); /* a secure page only: localhost, or https */
  } catch {
    const box = el("textarea"); /* a page of the LAN over http: the old way */
    box.value = text;
    document.body.append(box);
    box.select();
    document.execCommand("copy");
    box.remove();
  }
  status("Copied.");
}

function addTurn(turn, live) {
  const node = el("div", `turn ${turn.role}`);
  if (turn.role === "user") node.textContent = turn.content;
  else renderAnswer(node, turn, live);
  $("log").append(node);
  return node;
}

function renderAll() {
  $("log").replaceChildren();
  chat.turns.forEach((turn) => addTurn(turn, false));
  $("log").scrollTop = $("log").scrollHeight;
}

/* The messages of the request: the answered turns (an answer as the server gave it, without its sources), then
   the question. A question whose answer failed or was stopped is left out with it. */
function messages() {
  const out = [];
  const turns = chat.turns;
  for (let i = 0; i < turns.length; i++) {
    const next = turns[i + 1];
    if (turns[i].role === "user" && next && next.role === "assistant") {
      if (next.error || !next.extra) { i++; continue; }
      out.push({ role: "user", content: turns[i].content });
      out.push({ role: "assistant", content: next.extra.answer || next.content });
      i++;
    } else if (turns[i].role === "user") {
      out.push({ role: "user", content: turns[i].content });
    }
  }
  return out;
}

/* What the page keeps of a turn's local_rag field: what it shows, not the scores, calls and timings of each stage
   (a conversation of this browser's history stays small). */
function slim(extra) {
  return {
    answer: extra.answer, kind: extra.kind, sources: extra.sources, queries: extra.queries,
    decision: extra.decision ? { kind: extra.decision.kind, options: extra.decision.options || [] } : null,
    passages: (extra.passages || []).map((p) => ({ passage_id: p.passage_id, doc_id: p.doc_id, title: p.title })),
    timings_s: { total: extra.timings_s && extra.timings_s.total }, messages_cut: extra.messages_cut,
  };
}

function busy(on) {
  $("send").disabled = on;
  $("stop").hidden = !on;
  $("question").disabled = false;
}

async function ask(question) {
  question = question.trim();
  if (!question || chat.controller) return;
  chat.turns.push({ role: "user", content: question });
  const request = { model: $("model").value || "local", stream: true, messages: messages() };
  const only = $("only").value.split(",").map((p) => p.trim()).filter(Boolean);
  if (only.length) request.local_rag = { only };
  const turn = { role: "assistant", content: "", extra: null, error: "", question };
  chat.turns.push(turn);
  addTurn(chat.turns[chat.turns.length - 2], false);
  const node = addTurn(turn, true);
  const log = $("log");
  const follow = () => { log.scrollTop = log.scrollHeight; };
  follow();
  save();
  chat.controller = new AbortController();
  busy(true);
  status("");
  try {
    const response = await fetch("/v1/chat/completions", {
      method: "POST", headers: headers(), body: JSON.stringify(request), signal: chat.controller.signal,
    });
    if (!response.ok) throw await failure(response);
    await readStream(response, {
      status: (line) => { turn.status = line; if (!turn.content) renderAnswer(node, turn, true); },
      piece: (text) => { turn.content += text; renderAnswer(node, turn, true); follow(); },
      final: (extra) => { turn.extra = slim(extra); if (!turn.content) turn.content = extra.answer || ""; },
    });
  } catch (error) {
    turn.error = describe(error);
    if (error.code === 401) askKey(error.message);
  } finally {
    delete turn.status;
    chat.controller = null;
    busy(false);
    renderAnswer(node, turn, false);
    follow();
    save();
    $("question").focus();
  }
}

function stop() {
  if (chat.controller) chat.controller.abort();
}

/* ------------------------------------------------------------------ a document whole */

const escape = (word) => word.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
const spaced = (words) => new RegExp(words.map(escape).join("[\\s#*>|-]+")); /* spaces, or Markdown between */

/* The passage's place in the document's text, whatever the spaces between its words: from a run of its first words
   (a chunk may open with a heading the text writes otherwise: later runs are tried too) to a run of its last. */
function findPassage(text, passage) {
  const words = passage.split(/\s+/).filter(Boolean);
  for (const skip of [0, 6, 12]) {
    const head = words.slice(skip, skip + 8);
    if (head.length < Math.min(4, words.length)) break;
    const found = spaced(head).exec(text);
    if (!found) continue;
    const end = spaced(words.slice(-6)).exec(text.slice(found.index));
    return [found.index, found.index + (end ? end.index + end[0].length : found[0].length)];
  }
  return null;
}

async function readDocument(document, label, passages) {
  const dialog = $("reader");
  const box = $("reader-text");
  $("reader-title").textContent = label;
  box.replaceChildren(el("p", "waiting", "Reading…"));
  if (!dialog.open) dialog.showModal();
  try {
    const store = encodeURIComponent(chat.store);
    const path = document.split("/").map(encodeURIComponent).join("/");
    const page = await getJSON(`/v1/vector_stores/${store}/files/${path}/content`);
    const text = page.data.map((part) => part.text).join("\n\n");
    const spans = passages.map((p) => findPassage(text, p)).filter(Boolean).sort((a, b) => a[0] - b[0]);
    box.replaceChildren();
    let last = 0;
    for (const [start, end] of spans) {
      if (start < last) continue;
      box.append(text.slice(last, start), el("mark", "", text.slice(start, end)));
      last = end;
    }
    box.append(text.slice(last));
    const first = box.querySelector("mark");
    if (first) first.scrollIntoView({ block: "center" });
  } catch (error) {
    box.replaceChildren(el("p", "error", describe(error)));
  }
}

/* ------------------------------------------------------------------ the key, the models, saving */

function askKey(message) {
  $("key").hidden = false;
  $("key-note").textContent = sessionStorage.getItem(KEY) ? "That key was refused." : "";
  status(message, true);
  $("key-input").focus();
}

async function loadModels() {
  try {
    const models = await getJSON("/v1/models");
    const select = $("model");
    const chosen = select.value;
    select.replaceChildren();
    for (const model of models.data) {
      const option = el("option", "", model.id);
      option.value = model.id;
      select.append(option);
    }
    if (chosen) select.value = chosen;
    $("key").hidden = true;
    status("");
  } catch (error) {
    if (error.code === 401) askKey("This server wants its API key before it answers.");
    else status(describe(error), true);
  }
}

async function loadAbout() {
  try {
    const health = await getJSON("/healthz");
    const indexes = [health.index, ...(health.also || [])].join(" + ");
    chat.about = indexes;
    chat.store = health.index;
    $("about").textContent = `index ${indexes} · ${health.model} · ${health.mode}`;
    document.title = `local-rag · ${indexes}`;
  } catch (error) {
    $("about").textContent = "";
    status(describe(error), true);
  }
}

/* The index's documents as suggestions for Only, the first time it is used. */
async function listDocuments() {
  if (chat.listed || !chat.store) return;
  chat.listed = true;
  const list = $("documents");
  let after = "";
  try {
    while (list.children.length < MAX_LISTED) {
      const query = new URLSearchParams({ limit: "100", order: "asc" });
      if (after) query.set("after", after);
      const page = await getJSON(`/v1/vector_stores/${encodeURIComponent(chat.store)}/files?${query}`);
      for (const file of page.data) {
        if (file.status !== "completed") continue;
        const option = el("option");
        option.value = file.id;
        if (file.attributes && file.attributes.title && file.attributes.title !== file.id) option.label = file.attributes.title;
        list.append(option);
      }
      if (!page.has_more || !page.last_id) break;
      after = page.last_id;
    }
  } catch (error) {
    chat.listed = false; /* e.g. the key not given yet: try again at the next focus */
  }
}

function markdown() {
  const lines = [`# Conversation with local-rag (${chat.about || "index"}), ${new Date().toLocaleString()}`, ""];
  for (const turn of chat.turns) {
    if (turn.role === "user") {
      lines.push(`**You:** ${turn.content}`, "");
      continue;
    }
    lines.push(`**local-rag:** ${turn.content}${turn.error ? ` (${turn.error})` : ""}`, ...sourceLines(turn, "- ", true), "");
  }
  return lines.join("\n");
}

function download() {
  if (!chat.turns.length) {
    status("Nothing to save yet.");
    return;
  }
  const link = el("a");
  link.href = URL.createObjectURL(new Blob([markdown()], { type: "text/markdown" }));
  link.download = `local-rag-chat-${new Date().toISOString().slice(0, 19).replace(/[T:]/g, "-")}.md`;
  document.body.append(link);
  link.click();
  link.remove();
  setTimeout(() => URL.revokeObjectURL(link.href), 1000);
}

/* ------------------------------------------------------------------ wiring */

$("ask").addEventListener("submit", (event) => {
  event.preventDefault();
  const box = $("question");
  if (chat.controller || !box.value.trim()) return;
  const question = box.value;
  box.value = "";
  ask(question);
});
$("question").addEventListener("keydown", (event) => {
  if (event.key === "Enter" && !event.shiftKey && !event.isComposing) {
    event.preventDefault();
    $("ask").requestSubmit();
  }
});
document.addEventListener("keydown", (event) => { if (event.key === "Escape") stop(); });
$("stop").addEventListener("click", stop);
$("new").addEventListener("click", () => openChat(newId()));
$("history").addEventListener("change", (event) => { if (event.target.value) openChat(event.target.value); });
$("delete").addEventListener("click", () => {
  const list = chats().filter((c) => c.id !== chat.id);
  localStorage.setItem(CHATS, JSON.stringify(list));
  openChat(newId());
  status("The conversation was deleted from this browser.");
});
$("save").addEventListener("click", download);
$("reader-close").addEventListener("click", () => $("reader").close());
$("only").addEventListener("focus", listDocuments);
$("key").addEventListener("submit", (event) => {
  event.preventDefault();
  const key = $("key-input").value.trim();
  if (!key) return;
  sessionStorage.setItem(KEY, key);
  $("key-input").value = "";
  loadModels();
});

renderAll();
listChats(chats());
loadAbout();
loadModels();
$("question").focus();
