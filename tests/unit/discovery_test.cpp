// The served registry entries and Server Cards (src/discovery/): names derived and checked,
// the documents' fields, and the registry API's paging, search, versions and errors answered
// by the handler without a socket.
#include <gtest/gtest.h>

#include <stdexcept>

#include "console_test_support.hpp"
#include "discovery/discovery_documents.hpp"
#include "discovery/served_entries.hpp"

namespace toolport::discovery {
namespace {

using test_support::ConsoleRequest;

ServerIdentity identity(std::vector<std::string> profiles = {"cursor", "vscode"}) {
    ServerIdentity id;
    id.name = "toolport";
    id.title = "Toolport";
    id.version = "1.2.3";
    id.mcp_path = "/mcp";
    id.profiles = std::move(profiles);
    id.protocol_versions = {"2025-11-25", "2026-07-28"};
    id.legacy_sse = true;
    id.authentication = "none";
    id.published_at = "2026-11-28T17:00:00.000Z";
    return id;
}

TEST(DiscoveryNames, DerivedFromThePublicUrlsHostAndTheServerName) {
    EXPECT_EQ(derived_namespace("https://mcp.example.com/mcp"), "com.example.mcp");
    EXPECT_EQ(derived_namespace("https://MCP.Example.com:8443/mcp"), "com.example.mcp");
    EXPECT_EQ(derived_namespace("http://127.0.0.1:8080/mcp"), "local.toolport");
    EXPECT_EQ(derived_namespace("http://localhost:8080/mcp"), "local.toolport");
    EXPECT_EQ(derived_namespace(""), "local.toolport");
    EXPECT_EQ(name_segment("my server/2"), "my-server-2");

    ServeSettings settings;
    settings.public_url = "https://mcp.example.com/mcp";
    auto facts = make_facts(settings, identity());
    ASSERT_EQ(facts.entries.size(), 3u);
    EXPECT_EQ(facts.entries[0].name, "com.example.mcp/toolport");
    EXPECT_EQ(facts.entries[0].profile, "");
    EXPECT_EQ(facts.entries[1].name, "com.example.mcp/toolport-cursor");
    EXPECT_EQ(facts.entries[2].name, "com.example.mcp/toolport-vscode");
}

TEST(DiscoveryNames, ConfiguredNamesWinAndAreChecked) {
    ServeSettings settings;
    settings.name = "io.example/gateway";
    settings.profiles["vscode"].name = "io.example/editor-tools";
    auto facts = make_facts(settings, identity());
    EXPECT_EQ(facts.entries[0].name, "io.example/gateway");
    EXPECT_EQ(facts.entries[1].name, "io.example/gateway-cursor");
    EXPECT_EQ(facts.entries[2].name, "io.example/editor-tools");

    EXPECT_FALSE(name_problem("io.example/gateway"));
    EXPECT_TRUE(name_problem("gateway"));
    EXPECT_TRUE(name_problem("io.example/a/b"));
    EXPECT_TRUE(name_problem("io_example/gateway"));
    EXPECT_TRUE(name_problem("io.example/gate way"));

    settings.profiles["cursor"].name = "io.example/editor-tools";
    EXPECT_THROW(make_facts(settings, identity()), std::invalid_argument);
    ServeSettings unknown;
    unknown.profiles["nope"].name = "io.example/nope";
    try {
        make_facts(unknown, identity());
        FAIL() << "a profile the gateway lacks was accepted";
    } catch (const std::invalid_argument& e) {
        EXPECT_NE(std::string(e.what()).find("registry.serve.profiles.nope"), std::string::npos) << e.what();
    }
}

TEST(DiscoveryDocuments, ServerJsonHasRemotesAndOwnFactsButNoTools) {
    auto id = identity();
    id.authentication = "bearer";
    ServeSettings settings;
    settings.repository = "https://github.com/example/toolport";
    auto facts = make_facts(settings, id);
    auto json = server_json(facts, facts.entries[1], "https://h.example/mcp");
    EXPECT_EQ(json["$schema"], std::string(kServerJsonSchema));
    EXPECT_EQ(json["version"], "1.2.3");
    EXPECT_LE(json["description"].get<std::string>().size(), 100u);
    ASSERT_EQ(json["remotes"].size(), 1u);  // a profile has no legacy SSE endpoint
    EXPECT_EQ(json["remotes"][0]["type"], "streamable-http");
    EXPECT_EQ(json["remotes"][0]["url"], "https://h.example/mcp/cursor");
    EXPECT_EQ(json["remotes"][0]["headers"][0]["name"], "Authorization");
    EXPECT_EQ(json["repository"]["source"], "github");
    const auto& meta = json["_meta"][std::string(kMetaKey)];
    EXPECT_EQ(meta["profile"], "cursor");
    EXPECT_EQ(meta["serverCard"], "https://h.example/mcp/cursor/server-card");
    EXPECT_FALSE(json.contains("tools"));
    EXPECT_FALSE(meta.contains("tools"));

    auto whole = server_json(facts, facts.entries[0], "https://h.example/mcp");
    ASSERT_EQ(whole["remotes"].size(), 2u);
    EXPECT_EQ(whole["remotes"][1]["type"], "sse");
    EXPECT_EQ(whole["remotes"][1]["url"], "https://h.example/sse");

    auto card = server_card(facts, facts.entries[0], "https://h.example/mcp");
    EXPECT_EQ(card["$schema"], std::string(kServerCardSchema));
    EXPECT_EQ(card["remotes"][0]["supportedProtocolVersions"], Json({"2025-11-25", "2026-07-28"}));
    EXPECT_FALSE(card.contains("packages"));

    auto catalog = ai_catalog(facts, "https://h.example/mcp");
    ASSERT_EQ(catalog["entries"].size(), 3u);
    EXPECT_EQ(catalog["entries"][1]["url"], "https://h.example/mcp/cursor/server-card");
    EXPECT_EQ(catalog["entries"][0]["identifier"], "urn:air:toolport.local:mcp:toolport");
}

struct Answered {
    unsigned status;
    std::string head;
    Json body;
};

Answered ask(DiscoveryHandler& handler, const std::string& target, std::map<std::string, std::string> headers = {}) {
    ConsoleRequest req(HttpMethod::get, target, std::move(headers));
    auto path = target.substr(0, target.find('?'));
    EXPECT_TRUE(handler.handles(path)) << path;
    auto answer = handler.answer(req, path);
    EXPECT_TRUE(answer.reply.has_value());
    Answered out{answer.reply->status, answer.reply->head, nullptr};
    if (!answer.reply->body.empty()) out.body = Json::parse(answer.reply->body);
    return out;
}

std::string header_value(const std::string& head, const std::string& name) {
    auto at = head.find(name + ": ");
    if (at == std::string::npos) return {};
    at += name.size() + 2;
    return head.substr(at, head.find("\r\n", at) - at);
}

TEST(DiscoveryApi, PagesWithAnOpaqueCursorAndSearchesNames) {
    auto handler = make_discovery_handler(make_facts({}, identity({"a", "b", "c", "d"})));
    auto first = ask(*handler, "/v0.1/servers?limit=2");
    ASSERT_EQ(first.status, 200u);
    ASSERT_EQ(first.body["servers"].size(), 2u);
    EXPECT_EQ(first.body["metadata"]["count"], 2);
    auto cursor = first.body["metadata"]["nextCursor"].get<std::string>();
    std::vector<std::string> names;
    for (const auto& s : first.body["servers"]) names.push_back(s["server"]["name"]);
    std::string next = cursor;
    while (!next.empty()) {
        auto page = ask(*handler, "/v0.1/servers?limit=2&cursor=" + next);
        ASSERT_EQ(page.status, 200u);
        for (const auto& s : page.body["servers"]) names.push_back(s["server"]["name"]);
        next = page.body["metadata"].value("nextCursor", "");
    }
    EXPECT_EQ(names, (std::vector<std::string>{"local.toolport/toolport", "local.toolport/toolport-a",
                                               "local.toolport/toolport-b", "local.toolport/toolport-c",
                                               "local.toolport/toolport-d"}));

    auto found = ask(*handler, "/v0.1/servers?search=TOOLPORT-C");
    ASSERT_EQ(found.body["servers"].size(), 1u);
    EXPECT_EQ(found.body["servers"][0]["server"]["name"], "local.toolport/toolport-c");
    EXPECT_EQ(found.body["servers"][0]["_meta"]["io.modelcontextprotocol.registry/official"]["isLatest"], true);
    EXPECT_EQ(ask(*handler, "/v0.1/servers?version=9.9.9").body["servers"].size(), 0u);
    EXPECT_EQ(ask(*handler, "/v0.1/servers?version=latest").body["servers"].size(), 5u);
}

TEST(DiscoveryApi, BadInputIsA400ThatSaysWhy) {
    auto handler = make_discovery_handler(make_facts({}, identity()));
    for (const char* target :
         {"/v0.1/servers?limit=0", "/v0.1/servers?limit=101", "/v0.1/servers?limit=ten",
          "/v0.1/servers?cursor=bm90LWEtbmFtZQ", "/v0.1/servers?updated_since=yesterday", "/v0.1/servers?search=%zz"}) {
        auto answer = ask(*handler, target);
        EXPECT_EQ(answer.status, 400u) << target;
        EXPECT_NE(answer.body["error"].get<std::string>().find("Bad Request: "), std::string::npos) << target;
    }
}

TEST(DiscoveryApi, VersionsByEncodedNameLatestAndNotFound) {
    auto handler = make_discovery_handler(make_facts({}, identity()));
    auto versions = ask(*handler, "/v0.1/servers/local.toolport%2Ftoolport-cursor/versions");
    ASSERT_EQ(versions.status, 200u);
    EXPECT_EQ(versions.body["servers"][0]["server"]["version"], "1.2.3");
    EXPECT_EQ(ask(*handler, "/v0.1/servers/local.toolport/toolport-cursor/versions/latest").status, 200u);
    auto exact = ask(*handler, "/v0.1/servers/local.toolport%2Ftoolport/versions/1.2.3");
    EXPECT_EQ(exact.body["server"]["name"], "local.toolport/toolport");
    EXPECT_EQ(ask(*handler, "/v0.1/servers/local.toolport%2Ftoolport/versions/1.0.0").status, 404u);
    auto missing = ask(*handler, "/v0.1/servers/io.example%2Fnothing/versions");
    EXPECT_EQ(missing.status, 404u);
    EXPECT_EQ(missing.body["error"], "Server not found");
}

TEST(DiscoveryApi, CardsHaveTheirMediaTypeAndAStrongEtag) {
    auto handler = make_discovery_handler(make_facts({}, identity()));
    auto card = ask(*handler, "/mcp/vscode/server-card", {{"Host", "gw.example:9000"}});
    ASSERT_EQ(card.status, 200u);
    EXPECT_EQ(header_value(card.head, "Content-Type"), "application/mcp-server-card+json");
    EXPECT_EQ(header_value(card.head, "Access-Control-Allow-Origin"), "*");
    EXPECT_EQ(card.body["remotes"][0]["url"], "http://gw.example:9000/mcp/vscode");
    auto etag = header_value(card.head, "ETag");
    ASSERT_EQ(etag.front(), '"');
    auto again = ask(*handler, "/mcp/vscode/server-card", {{"Host", "gw.example:9000"}, {"If-None-Match", etag}});
    EXPECT_EQ(again.status, 304u);
    EXPECT_TRUE(again.body.is_null());
    auto other_host = ask(*handler, "/mcp/vscode/server-card", {{"Host", "other:1"}, {"If-None-Match", etag}});
    EXPECT_EQ(other_host.status, 200u);  // other bytes, another tag
    EXPECT_FALSE(handler->handles("/mcp/nope/server-card"));
    EXPECT_FALSE(handler->handles("/mcp"));
}

}  // namespace
}  // namespace toolport::discovery
