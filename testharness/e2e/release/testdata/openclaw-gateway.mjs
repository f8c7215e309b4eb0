// A real OpenClaw gateway (the pinned one) with the release's OpenClaw
// package installed from its .tgz, on the OpenClaw tests' fake model
// (host-sdk/openclaw/test: gateway.mjs installs with `openclaw plugins
// install`, as docs/install.md says). Prints {"a2aURL": …} once the
// plugin serves, stops when stdin closes.
//
//   OPENCLAW_ENTRY=… OPENCLAW_PLUGIN_STAGE=release.tgz node openclaw-gateway.mjs <host-sdk/openclaw/test>
import path from "node:path";
import { pathToFileURL } from "node:url";

const helpers = process.argv[2];
const { startFakeModel } = await import(pathToFileURL(path.join(helpers, "fake-model.mjs")).href);
const { startGateway } = await import(pathToFileURL(path.join(helpers, "gateway.mjs")).href);

const model = await startFakeModel();
let gateway;
try {
  gateway = await startGateway({ modelURL: model.url, pluginConfig: { agent_name: "Release Agent", request_timeout: "300s" } });
} catch (err) {
  console.error(String(err?.stack ?? err));
  await model.close();
  process.exit(1);
}
console.log(JSON.stringify({ a2aURL: gateway.a2aURL }));
process.stdin.resume();
process.stdin.on("end", async () => {
  await gateway.stop();
  await model.close();
  process.exit(0);
});
