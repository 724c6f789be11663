// Registry: tools, resources, templates and prompts; definitions; change listeners.
#include <gtest/gtest.h>

#include <algorithm>
#include <stdexcept>
#include <vector>

#include "server/registry.hpp"

using namespace toolport;

namespace {

ToolSpec tool(std::string name, std::string description = "") {
    ToolSpec t;
    t.name = std::move(name);
    t.description = std::move(description);
    return t;
}

ResourceTemplateSpec tmpl(std::string uri_template, std::string name = "t") {
    ResourceTemplateSpec t;
    t.uri_template = std::move(uri_template);
    t.name = std::move(name);
    return t;
}

struct Recorder {
    std::vector<CatalogKind> calls;
    Registry::Listener listener() {
        return [this](CatalogKind k) { calls.push_back(k); };
    }
};

}  // namespace

// ---- definitions ----------------------------------------------------------------------------

TEST(Registry, MinimalToolDefinition) {
    auto j = tool("echo").definition();
    EXPECT_EQ(j, Json::parse(R"({"name":"echo","inputSchema":{"type":"object"}})"));
    EXPECT_FALSE(j.contains("title"));
    EXPECT_FALSE(j.contains("description"));
    EXPECT_FALSE(j.contains("outputSchema"));
    EXPECT_FALSE(j.contains("annotations"));
    EXPECT_FALSE(j.contains("icons"));
}

TEST(Registry, FullToolDefinition) {
    ToolSpec t = tool("add", "Adds two numbers");
    t.title = "Adder";
    t.input_schema = Json::parse(R"({"type":"object","properties":{"a":{"type":"number"}},"required":["a"]})");
    t.output_schema = Json::parse(R"({"type":"object","properties":{"sum":{"type":"number"}}})");
    t.annotations = Json{{"readOnlyHint", true}, {"title", "Adder"}};
    t.icons = Json::array({Json{{"src", "https://example.com/i.png"}, {"mimeType", "image/png"}}});
    auto j = t.definition();
    EXPECT_EQ(j["name"], "add");
    EXPECT_EQ(j["title"], "Adder");
    EXPECT_EQ(j["description"], "Adds two numbers");
    EXPECT_EQ(j["inputSchema"], t.input_schema);
    EXPECT_EQ(j["outputSchema"], t.output_schema);
    EXPECT_EQ(j["annotations"]["readOnlyHint"], true);
    ASSERT_TRUE(j["icons"].is_array());
    EXPECT_EQ(j["icons"][0]["src"], "https://example.com/i.png");
    EXPECT_FALSE(j.contains("_meta"));
    EXPECT_FALSE(j.contains("execution"));

    t.meta = Json{{"k", "v"}};
    t.execution = Json{{"taskSupport", "optional"}};
    auto j2 = t.definition();
    EXPECT_EQ(j2["_meta"], Json({{"k", "v"}}));
    EXPECT_EQ(j2["execution"]["taskSupport"], "optional");
}

TEST(Registry, ResourceAndTemplateDefinitions) {
    ResourceSpec r;
    r.uri = "test://static";
    r.name = "static";
    r.mime_type = "text/plain";
    r.size = 12;
    auto j = r.definition();
    EXPECT_EQ(j, Json::parse(R"({"uri":"test://static","name":"static","mimeType":"text/plain","size":12})"));

    auto t = tmpl("test://template/{id}/data", "data");
    t.description = "by id";
    auto tj = t.definition();
    EXPECT_EQ(tj, Json::parse(R"({"uriTemplate":"test://template/{id}/data","name":"data","description":"by id"})"));
}

TEST(Registry, PromptDefinitionArguments) {
    PromptSpec p;
    p.name = "greet";
    p.description = "Says hello";
    p.arguments = {{"name", "Name", "who to greet", true}, {"style", "", "", false}};
    auto j = p.definition();
    EXPECT_EQ(j["name"], "greet");
    EXPECT_EQ(j["description"], "Says hello");
    ASSERT_TRUE(j["arguments"].is_array());
    ASSERT_EQ(j["arguments"].size(), 2u);
    EXPECT_EQ(j["arguments"][0],
              Json::parse(R"({"name":"name","title":"Name","description":"who to greet","required":true})"));
    EXPECT_EQ(j["arguments"][1], Json::parse(R"({"name":"style"})"));
    EXPECT_FALSE(j["arguments"][1].contains("required"));

    PromptSpec bare;
    bare.name = "simple";
    EXPECT_EQ(bare.definition(), Json::parse(R"({"name":"simple"})"));
}

// ---- tools ----------------------------------------------------------------------------------

TEST(Registry, AddReplaceRemoveTools) {
    Registry reg;
    Recorder rec;
    reg.add_listener(rec.listener());

    reg.add_tool(tool("b", "first"));
    reg.add_tool(tool("a"));
    ASSERT_EQ(rec.calls.size(), 2u);
    EXPECT_EQ(rec.calls[0], CatalogKind::tools);
    EXPECT_EQ(rec.calls[1], CatalogKind::tools);

    ASSERT_NE(reg.find_tool("b"), nullptr);
    EXPECT_EQ(reg.find_tool("b")->description, "first");
    EXPECT_EQ(reg.find_tool("missing"), nullptr);

    // Lists are in name order.
    std::vector<std::string> names;
    for (const auto& [n, spec] : reg.tools()) names.push_back(spec->name);
    EXPECT_EQ(names, (std::vector<std::string>{"a", "b"}));

    // Replacing keeps one entry and reports one change.
    reg.add_tool(tool("b", "second"));
    EXPECT_EQ(rec.calls.size(), 3u);
    EXPECT_EQ(reg.tools().size(), 2u);
    EXPECT_EQ(reg.find_tool("b")->description, "second");

    EXPECT_TRUE(reg.remove_tool("a"));
    EXPECT_EQ(rec.calls.size(), 4u);
    EXPECT_EQ(reg.find_tool("a"), nullptr);
    EXPECT_EQ(reg.tools().size(), 1u);

    // Removing something absent changes nothing and tells nobody.
    EXPECT_FALSE(reg.remove_tool("a"));
    EXPECT_EQ(rec.calls.size(), 4u);
}

TEST(Registry, ToolPtrOutlivesRemoval) {
    Registry reg;
    reg.add_tool(tool("keep", "still here"));
    auto p = reg.tool_ptr("keep");
    ASSERT_NE(p, nullptr);
    EXPECT_TRUE(reg.remove_tool("keep"));
    EXPECT_EQ(reg.tool_ptr("keep"), nullptr);
    EXPECT_EQ(p->description, "still here");
}

// ---- listeners ------------------------------------------------------------------------------

TEST(Registry, ListenersSeeTheKindOfChange) {
    Registry reg;
    Recorder rec;
    reg.add_listener(rec.listener());
    ResourceSpec r;
    r.uri = "u://1";
    r.name = "one";
    reg.add_resource(r);
    reg.add_resource_template(tmpl("u://{x}"));
    PromptSpec p;
    p.name = "p";
    reg.add_prompt(p);
    EXPECT_TRUE(reg.remove_prompt("p"));
    EXPECT_FALSE(reg.remove_prompt("p"));
    EXPECT_TRUE(reg.remove_resource("u://1"));
    EXPECT_FALSE(reg.remove_resource("u://1"));
    EXPECT_EQ(rec.calls, (std::vector<CatalogKind>{CatalogKind::resources, CatalogKind::resources, CatalogKind::prompts,
                                                   CatalogKind::prompts, CatalogKind::resources}));
}

TEST(Registry, EveryListenerIsCalledAndRemovedOnesAreNot) {
    Registry reg;
    Recorder a, b;
    int ida = reg.add_listener(a.listener());
    int idb = reg.add_listener(b.listener());
    EXPECT_NE(ida, idb);
    reg.add_tool(tool("x"));
    EXPECT_EQ(a.calls.size(), 1u);
    EXPECT_EQ(b.calls.size(), 1u);
    reg.remove_listener(ida);
    reg.add_tool(tool("y"));
    EXPECT_EQ(a.calls.size(), 1u);
    EXPECT_EQ(b.calls.size(), 2u);
}

TEST(Registry, ListenerMayRemoveItselfWhileCalled) {
    Registry reg;
    int calls = 0;
    int id = 0;
    id = reg.add_listener([&](CatalogKind) {
        ++calls;
        reg.remove_listener(id);
    });
    reg.add_tool(tool("x"));
    reg.add_tool(tool("y"));
    EXPECT_EQ(calls, 1);
}

TEST(Registry, BatchReportsEachKindOnce) {
    Registry reg;
    Recorder rec;
    reg.add_listener(rec.listener());
    reg.batch([&] {
        for (int i = 0; i < 50; ++i) reg.add_tool(tool("t" + std::to_string(i)));
        EXPECT_TRUE(rec.calls.empty());  // nothing until the batch ends
        reg.remove_tool("t0");
        PromptSpec p;
        p.name = "p";
        reg.add_prompt(p);
    });
    EXPECT_EQ(reg.tools().size(), 49u);
    ASSERT_EQ(rec.calls.size(), 2u);
    EXPECT_EQ(std::count(rec.calls.begin(), rec.calls.end(), CatalogKind::tools), 1);
    EXPECT_EQ(std::count(rec.calls.begin(), rec.calls.end(), CatalogKind::prompts), 1);
    EXPECT_EQ(std::count(rec.calls.begin(), rec.calls.end(), CatalogKind::resources), 0);

    // An empty batch reports nothing; later changes are reported immediately again.
    reg.batch([] {});
    EXPECT_EQ(rec.calls.size(), 2u);
    reg.add_tool(tool("after"));
    EXPECT_EQ(rec.calls.size(), 3u);
}

TEST(Registry, NestedBatchReportsOnlyAtTheOuterEnd) {
    Registry reg;
    Recorder rec;
    reg.add_listener(rec.listener());
    reg.batch([&] {
        reg.add_tool(tool("a"));
        reg.batch([&] { reg.add_tool(tool("b")); });
        EXPECT_TRUE(rec.calls.empty());
        reg.add_tool(tool("c"));
    });
    EXPECT_EQ(rec.calls, (std::vector<CatalogKind>{CatalogKind::tools}));
}

TEST(Registry, BatchThatThrowsStillReportsItsChanges) {
    Registry reg;
    Recorder rec;
    reg.add_listener(rec.listener());
    EXPECT_THROW(reg.batch([&] {
        reg.add_tool(tool("loaded-before-failure"));
        throw std::runtime_error("provider failed");
    }),
                 std::runtime_error);
    // The tool was added, so the catalogue changed.
    ASSERT_NE(reg.find_tool("loaded-before-failure"), nullptr);
    // Changes after the failed batch are reported immediately, not held back.
    reg.add_prompt(PromptSpec{.name = "p"});
    EXPECT_EQ(std::count(rec.calls.begin(), rec.calls.end(), CatalogKind::prompts), 1);
    EXPECT_EQ(std::count(rec.calls.begin(), rec.calls.end(), CatalogKind::tools), 1);
}

// ---- resource templates ----------------------------------------------------------------------

TEST(Registry, TemplateMatchSingleVariable) {
    auto t = tmpl("test://template/{id}/data");
    auto m = t.match("test://template/42/data");
    ASSERT_TRUE(m.has_value());
    EXPECT_EQ(*m, Json({{"id", "42"}}));
    EXPECT_EQ(t.match("test://template/abc-def_1.x/data"), Json({{"id", "abc-def_1.x"}}));

    EXPECT_FALSE(t.match("test://template/42/other").has_value());
    EXPECT_FALSE(t.match("test://template//data").has_value());          // empty variable
    EXPECT_FALSE(t.match("test://template/42/data/extra").has_value());  // extra suffix
    EXPECT_FALSE(t.match("test://template/42/datax").has_value());
    EXPECT_FALSE(t.match("test://template/42").has_value());
    EXPECT_FALSE(t.match("test://template/a/b/data").has_value());  // a variable is one segment
    EXPECT_FALSE(t.match("other://template/42/data").has_value());
    EXPECT_FALSE(t.match("").has_value());
}

TEST(Registry, TemplateMatchTrailingVariable) {
    auto t = tmpl("test://item/{name}");
    EXPECT_EQ(t.match("test://item/x.txt"), Json({{"name", "x.txt"}}));
    EXPECT_FALSE(t.match("test://item/").has_value());
    EXPECT_FALSE(t.match("test://item/a/b").has_value());
}

TEST(Registry, TemplateMatchSeveralVariables) {
    auto t = tmpl("file:///{dir}/{name}");
    auto m = t.match("file:///docs/readme.md");
    ASSERT_TRUE(m.has_value());
    EXPECT_EQ(*m, Json({{"dir", "docs"}, {"name", "readme.md"}}));
    EXPECT_FALSE(t.match("file:///docs/").has_value());
    EXPECT_FALSE(t.match("file:///docs").has_value());
    EXPECT_FALSE(t.match("file:////readme.md").has_value());
    EXPECT_FALSE(t.match("file:///docs/sub/readme.md").has_value());

    auto t2 = tmpl("db://{table}/rows/{row}.json");
    EXPECT_EQ(t2.match("db://users/rows/17.json"), Json({{"table", "users"}, {"row", "17"}}));
    EXPECT_FALSE(t2.match("db://users/rows/17.xml").has_value());
}

TEST(Registry, TemplateWithoutVariablesMatchesExactly) {
    auto t = tmpl("test://fixed");
    EXPECT_EQ(t.match("test://fixed"), Json::object());
    EXPECT_FALSE(t.match("test://fixed2").has_value());
    EXPECT_FALSE(t.match("test://fixe").has_value());
}

TEST(Registry, MatchTemplateUsesRegistrationOrderAndReplaces) {
    Registry reg;
    Recorder rec;
    reg.add_listener(rec.listener());
    reg.add_resource_template(tmpl("x://{a}", "first"));
    reg.add_resource_template(tmpl("x://{b}", "second"));
    auto m = reg.match_template("x://v");
    ASSERT_TRUE(m.has_value());
    EXPECT_EQ(m->first->name, "first");
    EXPECT_EQ(m->second, Json({{"a", "v"}}));
    EXPECT_FALSE(reg.match_template("y://v").has_value());

    reg.add_resource_template(tmpl("x://{a}", "replaced"));
    EXPECT_EQ(reg.resource_templates().size(), 2u);
    EXPECT_EQ(reg.resource_templates()[0]->name, "replaced");
    ASSERT_NE(reg.find_template("x://{a}"), nullptr);
    EXPECT_EQ(reg.find_template("x://{a}")->name, "replaced");
    EXPECT_EQ(reg.find_template("x://{zzz}"), nullptr);
    EXPECT_EQ(rec.calls.size(), 3u);
}

TEST(Registry, FindResourceAndPrompt) {
    Registry reg;
    ResourceSpec r;
    r.uri = "test://a";
    r.name = "a";
    reg.add_resource(r);
    PromptSpec p;
    p.name = "pr";
    reg.add_prompt(p);
    ASSERT_NE(reg.find_resource("test://a"), nullptr);
    EXPECT_EQ(reg.find_resource("test://a")->name, "a");
    EXPECT_EQ(reg.find_resource("test://b"), nullptr);
    ASSERT_NE(reg.find_prompt("pr"), nullptr);
    EXPECT_EQ(reg.find_prompt("nope"), nullptr);
    EXPECT_EQ(reg.resources().size(), 1u);
    EXPECT_EQ(reg.prompts().size(), 1u);
}
