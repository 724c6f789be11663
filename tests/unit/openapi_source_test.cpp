// The openapi source's life on a deterministic loop: a file document's tools registered
// in start(), a bad document never stopping it (retried with backoff, 1 s then 2 s ...),
// reload() and the refresh interval announcing only real changes, stop() ending it all.
#include <gtest/gtest.h>

#include "manual_executor.hpp"
#include "openapi_test_support.hpp"
#include "providers/source_table.hpp"
#include "server/server.hpp"

using namespace toolport;
using namespace toolport::providers;
using namespace toolport::openapi::test;
using namespace std::chrono_literals;

namespace {

std::string document(const std::string& operation_id) {
    return R"(openapi: 3.1.0
info: {title: t, version: '1'}
paths:
  /things:
    get: {operationId: )" +
           operation_id + R"(, responses: {'200': {description: ok}}}
  /status:
    get: {operationId: status, responses: {'200': {description: ok}}}
)";
}

class OpenApiSource : public ::testing::Test {
protected:
    OpenApiSource() : server(exec, ServerOptions{}) {
        server.registry().add_listener([this](CatalogKind kind) { changes += kind == CatalogKind::tools; });
    }

    RunningSource start(Json settings) {
        settings["base_url"] = "http://127.0.0.1:9/api";
        return start_source("openapi", server, SourceSettings(std::move(settings), "openapi.demo"));
    }
    bool has(const std::string& tool) const { return server.registry().find_tool(tool) != nullptr; }

    test_support::ManualExecutor exec;
    McpServer server;
    DocumentFolder folder;
    int changes = 0;
};

TEST_F(OpenApiSource, AFileDocumentsToolsAreThereWhenStartReturns) {
    auto running = start({{"document", folder.write("api.yaml", document("listThings"))}, {"tool_prefix", "demo_"}});
    EXPECT_TRUE(has("demo_listThings"));
    EXPECT_TRUE(has("demo_status"));
    const ToolSpec* tool = server.registry().find_tool("demo_listThings");
    EXPECT_EQ(tool->service, "openapi");  // the instance's name (start_source by kind: the kind's)
    EXPECT_TRUE(tool->paces_downstream);
    EXPECT_EQ(changes, 1);
    EXPECT_EQ(exec.pending_timers(), 0u);  // no refresh interval: nothing scheduled
}

TEST_F(OpenApiSource, ABadDocumentIsRetriedWithBackoffUntilItCanBeUsed) {
    const std::string path = (folder.path() / "api.yaml").string();
    auto running = start({{"document", path}});  // not there yet: no throw
    EXPECT_FALSE(has("listThings"));
    exec.advance(1000ms);  // first retry: still missing
    folder.write("api.yaml", "openapi: [\n");
    exec.advance(1999ms);  // the second comes 2 s after the first
    EXPECT_EQ(exec.pending_timers(), 1u);
    exec.advance(1ms);  // that one finds it broken; the next is 4 s later
    EXPECT_FALSE(has("listThings"));
    folder.write("api.yaml", document("listThings"));
    exec.advance(3999ms);
    EXPECT_FALSE(has("listThings"));
    exec.advance(1ms);
    EXPECT_TRUE(has("listThings"));
    EXPECT_EQ(exec.pending_timers(), 0u);
}

TEST_F(OpenApiSource, ReloadAnnouncesOnlyRealChanges) {
    const std::string path = folder.write("api.yaml", document("listThings"));
    auto running = start({{"document", path}});
    changes = 0;
    running.source().reload();
    exec.run();
    EXPECT_EQ(changes, 0);  // the same document
    folder.write("api.yaml", document("findThings"));
    running.source().reload();
    exec.run();
    EXPECT_EQ(changes, 1);
    EXPECT_TRUE(has("findThings"));
    EXPECT_FALSE(has("listThings"));
    EXPECT_TRUE(has("status"));

    // A broken document keeps the last good tools.
    folder.write("api.yaml", "openapi: 3.1.0\npaths: [\n");
    running.source().reload();
    exec.run();
    EXPECT_TRUE(has("findThings"));
    EXPECT_EQ(changes, 1);
}

TEST_F(OpenApiSource, RefreshesPeriodicallyAndStopsWhenStopped) {
    const std::string path = folder.write("api.yaml", document("listThings"));
    auto running = start({{"document", path}, {"refresh_interval_s", 60}});
    folder.write("api.yaml", document("findThings"));
    exec.advance(59s);
    EXPECT_TRUE(has("listThings"));
    exec.advance(1s);
    EXPECT_TRUE(has("findThings"));
    running.source().stop();
    folder.write("api.yaml", document("lastThings"));
    exec.advance(120s);
    EXPECT_TRUE(has("findThings"));
    running.source().reload();
    exec.run();
    EXPECT_FALSE(has("lastThings"));
}

TEST_F(OpenApiSource, AUrlDocumentIsNotFetchedDuringStart) {
    // No HTTP client here (unit tests): the fetch fails in the background and is retried;
    // start itself neither throws nor registers anything.
    auto running = start({{"document", "http://127.0.0.1:9/openapi.yaml"}});
    EXPECT_TRUE(server.registry().tools().empty());
    EXPECT_EQ(exec.pending_timers(), 1u);
}

}  // namespace
