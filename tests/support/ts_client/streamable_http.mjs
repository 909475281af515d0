// The official TypeScript SDK's MCP client over Streamable HTTP, for the tests: connects to a face's URL
// with the SDK's StreamableHTTPClientTransport (initialize, then every request with the Mcp-Session-Id
// the server issued), sends a list of requests through the SDK's own methods (which validate every answer,
// and a tool's structuredContent against the outputSchema listed first), and prints one JSON document.
//
// stdin: {"url": "http://127.0.0.1:PORT/kuradb/mcp", "requests": [{"method": "tools/list"}, ...]}
// stdout: {"protocolVersion", "sessionId", "serverInfo", "capabilities", "instructions",
//          "responses": [{"result": {...}} | {"error": {"code", "message", "data"}}, ...]}
// Exit 0 once every request has an answer (an error answer included); 1 if the session itself failed.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

const METHODS = {
  "tools/list": (client, params) => client.listTools(params),
  "tools/call": (client, params) => client.callTool(params),
  "prompts/list": (client, params) => client.listPrompts(params),
  "resources/list": (client, params) => client.listResources(params),
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
  const transport = new StreamableHTTPClientTransport(new URL(spec.url));
  const client = new Client({ name: "hallouminate-tests-ts-http", version: "1.0.0" });
  await client.connect(transport);
  const sessionId = transport.sessionId ?? null;
  const responses = [];
  let toolsListed = false;
  try {
    for (const request of spec.requests) {
      try {
        if (request.method === "tools/call" && !toolsListed) await client.listTools();
        toolsListed ||= request.method === "tools/list" || request.method === "tools/call";
        responses.push({ result: await METHODS[request.method](client, request.params ?? {}) });
      } catch (error) {
        responses.push({
          error: { code: error.code ?? null, message: String(error.message ?? error), data: error.data ?? null },
        });
      }
    }
  } finally {
    await transport.terminateSession().catch(() => {});
    await client.close();
  }
  process.stdout.write(
    JSON.stringify({
      protocolVersion: transport.protocolVersion ?? null,
      sessionId,
      serverInfo: client.getServerVersion(),
      capabilities: client.getServerCapabilities(),
      instructions: client.getInstructions() ?? null,
      responses,
    }) + "\n",
  );
}

main().catch((error) => {
  process.stderr.write(`ts http client: ${error?.stack ?? error}\n`);
  process.exit(1);
});
