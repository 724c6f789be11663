// The console's pages, in the navigation's order. A page is listed only once the API it
// reads is served (see docs/console.md).
import { Overview } from "./overview.jsx";
import { Tools } from "./tools.jsx";

export const pages = [
  { id: "overview", title: "Overview", component: Overview },
  { id: "tools", title: "Tools", component: Tools },
];
