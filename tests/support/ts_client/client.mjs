// The official TypeScript SDK's MCP client, for the tests: spawns an MCP stdio server with the SDK's
// StdioClientTransport, or reaches a Streamable HTTP endpoint with its StreamableHTTPClientTransport (when
// the spec has a "url"), sends a list of requests through the SDK's own methods (which validate every
// answer against the SDK's schemas, and a tool's structuredContent against the outputSchema published in
// tools/list, listed first when the requests do not), and prints one JSON document on stdout.
//
// stdin: {"command": "...", "args": [...], "env": {...}, "cwd": "...",          (stdio)
//      or {"url": "http://127.0.0.1:PORT/mcp", "headers": {...}, "terminate": true, (Streamable HTTP)
//         "requests": [{"method": "tools/list"}, {"method": "prompts/get", "params": {...}}, ...]}
// stdout: {"protocolVersion", "serverInfo", "capabilities", "instructions",
//          "sessionId" (HTTP: the Mcp-Session-Id the server issued; null over stdio),
//          "terminated" (HTTP with "terminate": the session was ended with DELETE before closing),
//          "responses": [{"result": {...}} | {"error": {"code", "message", "data"}}, ...]}
// Exit 0 once every request has an answer (an error answer included); 1 if the session itself failed.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

const METHODS = {
  "tools/list": (client, params) => client.listTools(params),
  "tools/call": (client, params) => client.callTool(params),
  "prompts/list": (client, params) => client.listPrompts(params),
  "prompts/get": (client, params) => client.getPrompt(params),
  "resources/list": (client, params) => client.listResources(params),
  "resources/templates/list": (client, params) => client.listResourceTemplates(params),
  "resources/read": (client, params) => client.readResource(params),
};

async function readStdin() {
  const chunks = [];
  for await (const chunk of process.stdin) chunks.push(chunk);
  return JSON.parse(Buffer.concat(chunks).toString("utf8"));
}

async function main() {
  const spec = await readStdin();
  for (const request of spec.requests) {
    if (!(request.method in METHODS)) {
      throw new Error(`unsupported method ${request.method}; supported: ${Object.keys(METHODS).join(", ")}`);
    }
  }
  const transport = spec.url
    ? new StreamableHTTPClientTransport(new URL(spec.url), { requestInit: { headers: spec.headers ?? {} } })
    : new StdioClientTransport({
        command: spec.command,
        args: spec.args ?? [],
        env: spec.env,
        cwd: spec.cwd ?? undefined,
        stderr: "inherit",
      });
  // The SDK hands the negotiated version to the transport (HTTP sends it as a header on every request
  // after initialize; stdio has no use for it): note it, and keep the transport's own handling.
  let protocolVersion = null;
  const setProtocolVersion = transport.setProtocolVersion?.bind(transport);
  transport.setProtocolVersion = (version) => {
    protocolVersion = version;
    setProtocolVersion?.(version);
  };
  const client = new Client({ name: "hallouminate-tests-ts", version: "1.0.0" });
  await client.connect(transport);
  const sessionId = transport.sessionId ?? null;
  const responses = [];
  let toolsListed = false;
  let terminated = false;
  try {
    for (const request of spec.requests) {
      try {
        // The SDK checks a tool's structuredContent against the outputSchema it saw in tools/list only:
        // list first, as hosts do, so that every result is checked.
        if (request.method === "tools/call" && !toolsListed) await client.listTools();
        toolsListed ||= request.method === "tools/list" || request.method === "tools/call";
        responses.push({ result: await METHODS[request.method](client, request.params ?? {}) });
      } catch (error) {
        responses.push({
          error: { code: error.code ?? null, message: String(error.message ?? error), data: error.data ?? null },
        });
      }
    }
    if (spec.url && spec.terminate) {
      await transport.terminateSession(); // DELETE with the session id, as a host does when it is done
      terminated = transport.sessionId === undefined;
    }
  } finally {
    await client.close();
  }
  process.stdout.write(
    JSON.stringify({
      protocolVersion,
      serverInfo: client.getServerVersion(),
      capabilities: client.getServerCapabilities(),
      instructions: client.getInstructions() ?? null,
      sessionId,
      terminated,
      responses,
    }) + "\n",
  );
}

main().catch((error) => {
  process.stderr.write(`ts client: ${error?.stack ?? error}\n`);
  process.exit(1);
});
