"use strict";
// The page speaks gmcp.mudstandards.org (docs/serve.md §9.2): BINARY frames carry lines, TEXT
// frames GMCP messages. Everything the server sends is shown with textContent, never as HTML.
const out = document.getElementById("out");
const input = document.getElementById("line");
const decoder = new TextDecoder();
const encoder = new TextEncoder();
const ws = new WebSocket(location.href.replace(/^http/, "ws").replace(/\/[^/]*$/, "/ws"),
                         ["gmcp.mudstandards.org"]);
ws.binaryType = "arraybuffer";

function show(text, kind) {
  const span = document.createElement("span");
  span.className = kind;
  span.textContent = text + "\n";
  out.appendChild(span);
  while (out.childNodes.length > 2000) out.removeChild(out.firstChild);
  out.scrollTop = out.scrollHeight;
}

function kindOf(line) {
  if (line.startsWith("ok:")) return "ok";
  if (line.startsWith("error:")) return "error";
  if (line.startsWith("[")) return "world";
  return "";
}

function gmcp(message) {
  const space = message.indexOf(" ");
  const name = space < 0 ? message : message.slice(0, space);
  let data = null;
  try { data = space < 0 ? null : JSON.parse(message.slice(space + 1)); } catch (e) { return; }
  if (name === "Char.Name" && data) {
    document.getElementById("who").textContent =
      data.name + " (#" + data.id + ")" + (data.wizard ? ", the wizard" : "");
    ws.send("tickstep.Schedules.Get");
  } else if (name === "tickstep.Schedules.List" && data) {
    const list = document.getElementById("schedules");
    list.replaceChildren();
    for (const s of data.schedules) {
      const item = document.createElement("li");
      item.textContent = s.text;
      list.appendChild(item);
    }
    if (data.total > data.schedules.length) {
      const more = document.createElement("li");
      more.textContent = "… and " + (data.total - data.schedules.length) + " more";
      list.appendChild(more);
    }
  }
}

ws.onmessage = (event) => {
  if (typeof event.data === "string") {
    gmcp(event.data);
    return;
  }
  for (const line of decoder.decode(event.data).split("\r\n")) {
    if (line !== "") show(line, kindOf(line));
    // The login's password stage (docs/serve.md §10.1, §10.9): from its prompt until the server
    // says anything that ends it (a welcome, the name prompt), every line typed is masked and not
    // shown back, as a telnet client's echo is off meanwhile; a refused password asked again
    // stays masked.
    if (line.startsWith("password: ")) input.type = "password";
    else if (/^(ok|name|hello): /.test(line)) input.type = "text";
  }
};
ws.onclose = () => show("(connection closed)", "error");
input.addEventListener("keydown", (event) => {
  if (event.key !== "Enter" || ws.readyState !== WebSocket.OPEN) return;
  const secret = input.type === "password";
  show(secret ? "> (password)" : "> " + input.value, "me");
  ws.send(encoder.encode(input.value));
  if (secret) {
    input.value = "";
    return;
  }
  const word = input.value.trim().split(" ")[0].toLowerCase();
  if (["remind", "every", "at", "stop"].includes(word)) setTimeout(() => ws.send("tickstep.Schedules.Get"), 300);
  input.value = "";
});
document.getElementById("refresh").onclick = () => ws.send("tickstep.Schedules.Get");
