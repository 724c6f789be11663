// The console's pages, in the navigation's order (docs/console.md, "The page").
import { Calls } from "./calls.jsx";
import { Configuration } from "./config.jsx";
import { Overview } from "./overview.jsx";
import { Pins } from "./pins.jsx";
import { Playground } from "./playground.jsx";
import { Sessions } from "./sessions.jsx";
import { Tools } from "./tools.jsx";

export const pages = [
  { id: "overview", title: "Overview", component: Overview },
  { id: "tools", title: "Tools", component: Tools },
  { id: "playground", title: "Playground", component: Playground },
  { id: "calls", title: "Calls", component: Calls },
  { id: "sessions", title: "Sessions and tasks", component: Sessions },
  { id: "pins", title: "Pins", component: Pins },
  { id: "configuration", title: "Configuration", component: Configuration },
];
