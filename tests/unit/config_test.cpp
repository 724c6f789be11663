// Configuration loading: YAML files, validation messages, ${ENV} expansion, listen addresses,
// bearer token sources.
#include <gtest/gtest.h>

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <typeinfo>
#include <vector>

#include "app/config.hpp"
#include "app/runtime.hpp"
#include "manual_executor.hpp"
#include "server/session.hpp"

using namespace toolport;
namespace fs = std::filesystem;

namespace {

class ConfigTest : public ::testing::Test {
protected:
    void SetUp() override {
        const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
        dir_ = fs::temp_directory_path() / ("toolport-config-test-" + std::to_string(::getpid()) + "-" + info->name());
        fs::remove_all(dir_);
        fs::create_directories(dir_);
    }
    void TearDown() override {
        for (const auto& name : env_) ::unsetenv(name.c_str());
        std::error_code ec;
        fs::remove_all(dir_, ec);
    }

    std::string write(const std::string& name, const std::string& text) {
        auto path = (dir_ / name).string();
        std::ofstream(path, std::ios::binary) << text;
        return path;
    }
    void set_env(const std::string& name, const std::string& value) {
        ::setenv(name.c_str(), value.c_str(), 1);
        env_.push_back(name);
    }
    void unset_env(const std::string& name) { ::unsetenv(name.c_str()); }

    // Loads `text` and returns the ConfigError message (fails when nothing is thrown).
    std::string error_of(const std::string& text, std::string* path_out = nullptr) {
        auto path = write("bad.yaml", text);
        if (path_out) *path_out = path;
        try {
            (void)load_config(path);
        } catch (const ConfigError& e) {
            return e.what();
        } catch (const std::exception& e) {
            ADD_FAILURE() << "expected ConfigError, got another exception: " << e.what();
            return {};
        }
        ADD_FAILURE() << "expected ConfigError for:\n" << text;
        return {};
    }

    fs::path dir_;
    std::vector<std::string> env_;
};

}  // namespace

// ---- defaults and valid files ---------------------------------------------------------------

TEST_F(ConfigTest, EmptyPathGivesDefaults) {
    Config c = load_config("");
    EXPECT_EQ(c.transport, Config::Transport::http);
    EXPECT_EQ(c.http.host, "127.0.0.1");
    EXPECT_EQ(c.http.port, 8080);
    EXPECT_EQ(c.http.path, "/mcp");
    EXPECT_EQ(c.http.max_json_depth, 64u);
    EXPECT_EQ(c.http.max_sessions, 100000u);
    EXPECT_EQ(c.http.handshake_timeout, std::chrono::seconds(10));
    EXPECT_EQ(c.http.max_connections, 10000u);
    EXPECT_EQ(c.http.max_batch_size, 1000u);
    EXPECT_TRUE(c.http.allowed_origins.empty());
    EXPECT_TRUE(c.http.bearer_tokens.empty());
    EXPECT_TRUE(c.http.legacy_sse);
    EXPECT_TRUE(c.packs.empty());
    EXPECT_EQ(c.log_level, "info");
    EXPECT_EQ(c.server.name, "toolport");
    EXPECT_EQ(c.server.page_size, 100u);
    EXPECT_EQ(c.server.task_ttl, std::chrono::hours(1));
    EXPECT_EQ(c.server.task_poll_interval, std::chrono::milliseconds(500));
}

TEST_F(ConfigTest, EmptyFileGivesDefaults) {
    Config c = load_config(write("empty.yaml", ""));
    EXPECT_EQ(c.http.port, 8080);
    EXPECT_EQ(c.server.name, "toolport");
    Config c2 = load_config(write("comments.yaml", "# nothing here\n"));
    EXPECT_EQ(c2.http.path, "/mcp");
}

TEST_F(ConfigTest, ValidFileSetsEveryField) {
    auto path = write("full.yaml", R"(
server:
  name: my-server
  title: My Server
  instructions: Be nice
  transport: stdio
  page_size: 25
  client_request_timeout_ms: 1500
  task_ttl_ms: 600000
  task_poll_interval_ms: 250
http:
  listen: 0.0.0.0:9001
  path: /api/mcp
  max_body_bytes: 2048
  max_header_bytes: 4096
  max_json_depth: 32
  max_sessions: 7
  session_idle_timeout_s: 60
  handshake_timeout_s: 3
  max_connections: 50
  max_batch_size: 20
  allowed_origins: ["http://app.example:*", "https://exact.example"]
  allowed_hosts:
    - mcp.example.com
  legacy_sse: false
  sse_retry_ms: 0
stdio:
  max_message_bytes: 65536
packs: [conformance, context]
log:
  level: debug
)");
    Config c = load_config(path);
    EXPECT_EQ(c.server.name, "my-server");
    EXPECT_EQ(c.server.title, "My Server");
    EXPECT_EQ(c.server.instructions, "Be nice");
    EXPECT_EQ(c.transport, Config::Transport::stdio);
    EXPECT_EQ(c.server.page_size, 25u);
    EXPECT_EQ(c.server.client_request_timeout, std::chrono::milliseconds(1500));
    EXPECT_EQ(c.server.task_ttl, std::chrono::minutes(10));
    EXPECT_EQ(c.server.task_poll_interval, std::chrono::milliseconds(250));
    EXPECT_EQ(c.http.host, "0.0.0.0");
    EXPECT_EQ(c.http.port, 9001);
    EXPECT_EQ(c.http.path, "/api/mcp");
    EXPECT_EQ(c.http.max_body_bytes, 2048u);
    EXPECT_EQ(c.http.max_header_bytes, 4096u);
    EXPECT_EQ(c.http.max_json_depth, 32u);
    EXPECT_EQ(c.http.max_sessions, 7u);
    EXPECT_EQ(c.http.session_idle_timeout, std::chrono::seconds(60));
    EXPECT_EQ(c.http.handshake_timeout, std::chrono::seconds(3));
    EXPECT_EQ(c.http.max_connections, 50u);
    EXPECT_EQ(c.http.max_batch_size, 20u);
    EXPECT_EQ(c.http.allowed_origins, (std::vector<std::string>{"http://app.example:*", "https://exact.example"}));
    EXPECT_EQ(c.http.allowed_hosts, (std::vector<std::string>{"mcp.example.com"}));
    EXPECT_FALSE(c.http.legacy_sse);
    EXPECT_EQ(c.http.sse_retry, std::chrono::milliseconds(0));
    EXPECT_EQ(c.stdio.max_message_bytes, 65536u);
    EXPECT_EQ(c.packs, (std::vector<std::string>{"conformance", "context"}));
    EXPECT_EQ(c.log_level, "debug");
}

TEST_F(ConfigTest, PartialFileKeepsOtherDefaults) {
    Config c = load_config(write("partial.yaml", "http:\n  max_sessions: 5\n"));
    EXPECT_EQ(c.http.max_sessions, 5u);
    EXPECT_EQ(c.http.port, 8080);
    EXPECT_EQ(c.http.host, "127.0.0.1");
    EXPECT_EQ(c.transport, Config::Transport::http);
}

TEST_F(ConfigTest, BooleanSpellings) {
    for (const char* yes : {"true", "yes", "on"}) {
        Config c = load_config(write("b.yaml", std::string("http:\n  legacy_sse: ") + yes + "\n"));
        EXPECT_TRUE(c.http.legacy_sse) << yes;
    }
    for (const char* no : {"false", "no", "off"}) {
        Config c = load_config(write("b.yaml", std::string("http:\n  legacy_sse: ") + no + "\n"));
        EXPECT_FALSE(c.http.legacy_sse) << no;
    }
}

// ---- validation errors ----------------------------------------------------------------------

TEST_F(ConfigTest, UnknownKeyNamesFileLineAndKey) {
    std::string path;
    auto msg = error_of("server:\n  name: x\nhttp:\n  listen: 127.0.0.1:9000\n  bogus_key: 1\n", &path);
    EXPECT_NE(msg.find(path), std::string::npos) << msg;
    EXPECT_NE(msg.find("bad.yaml:5:"), std::string::npos) << msg;
    EXPECT_NE(msg.find("http.bogus_key"), std::string::npos) << msg;
    EXPECT_NE(msg.find("unknown key"), std::string::npos) << msg;
    EXPECT_NE(msg.find("max_sessions"), std::string::npos) << msg;  // lists the expected keys
}

TEST_F(ConfigTest, UnknownTopLevelKey) {
    auto msg = error_of("log:\n  level: info\nlogging: true\n");
    EXPECT_NE(msg.find("bad.yaml:3:"), std::string::npos) << msg;
    EXPECT_NE(msg.find("logging"), std::string::npos) << msg;
    EXPECT_NE(msg.find("unknown key"), std::string::npos) << msg;
}

// ---- --import of a file that lists Toolport itself (issue 29, defect 7) ------------------------

TEST_F(ConfigTest, ImportSkipsTheEntryThatImportsTheSameFileAndMarksTheOthers) {
    unset_env(kImportMarker);
    const auto file = write("servers.json", R"({"mcpServers": {
        "self": {"command": "toolport", "args": ["serve", "--stdio", "--import=servers.json"], "cwd": ")" +
                                                dir_.string() + R"("},
        "other": {"command": "other-server", "args": ["--import", "elsewhere.json"]},
        "web": {"url": "https://example.com/mcp"}}})");
    Config config;
    auto warnings = import_mcp_servers(config, file);
    ASSERT_EQ(warnings.size(), 1u);
    EXPECT_NE(warnings[0].find("skipped the server \"self\""), std::string::npos) << warnings[0];
    ASSERT_EQ(config.instances.size(), 1u);
    auto upstreams = config.instances[0].settings.value("upstreams");
    ASSERT_TRUE(upstreams && upstreams->is_object());
    EXPECT_FALSE(upstreams->contains("self"));
    // A child learns the (absolute) file it was imported from; a URL has no environment.
    EXPECT_EQ((*upstreams)["other"]["env"][kImportMarker], fs::canonical(file).string());
    EXPECT_FALSE((*upstreams)["web"].contains("env"));
}

TEST_F(ConfigTest, AToolportStartedFromAnImportOfTheFileDoesNotImportItAgain) {
    const auto file = write("servers.json", R"({"mcpServers": {"x": {"command": "x"}}})");
    set_env(kImportMarker, "/somewhere/else.json\n" + fs::canonical(file).string());
    Config config;
    auto warnings = import_mcp_servers(config, file);
    ASSERT_EQ(warnings.size(), 1u);
    EXPECT_NE(warnings[0].find("this Toolport was started by one that imports the same file"), std::string::npos);
    EXPECT_TRUE(config.instances.empty());
}

// ---- first contact (issue 29, finding 11): what a new user's mistakes are told -----------------

TEST_F(ConfigTest, AnUnknownKeySuggestsTheClosestOne) {
    auto msg = error_of("server:\n  name: x\nhttp:\n  listne: 127.0.0.1:9000\n");
    EXPECT_NE(msg.find("bad.yaml:4: http.listne: unknown key; did you mean \"listen\"?"), std::string::npos) << msg;
    // Far from every key: no guess, the list alone.
    msg = error_of("http:\n  zzzzzzzz: 1\n");
    EXPECT_EQ(msg.find("did you mean"), std::string::npos) << msg;
    EXPECT_NE(msg.find("expected one of"), std::string::npos) << msg;
}

TEST_F(ConfigTest, AnUpstreamKeyIsNamedAsTheFileWritesIt) {
    auto msg = error_of("upstreams:\n  x:\n    comand: foo\n");
    EXPECT_NE(msg.find("bad.yaml:3: upstreams.x.comand: unknown key; did you mean \"command\"?"), std::string::npos)
        << msg;
    EXPECT_EQ(msg.find("gateway.upstreams"), std::string::npos) << msg;
}

TEST_F(ConfigTest, ListenAndPackErrorsNameTheFileAndLine) {
    auto msg = error_of("server:\n  name: x\nhttp:\n  listen: localhost\n");
    EXPECT_NE(msg.find("bad.yaml:4: http.listen: "), std::string::npos) << msg;
    EXPECT_NE(msg.find("HOST:PORT"), std::string::npos) << msg;
    msg = error_of("packs:\n  - conformance\n  - conformence2\n");
    EXPECT_NE(msg.find("bad.yaml:3: packs: unknown pack \"conformence2\" (did you mean \"conformance\"?)"),
              std::string::npos)
        << msg;
}

TEST_F(ConfigTest, AnMcpClientServerListIsPointedAtImport) {
    std::string path;
    auto msg = error_of(R"({"mcpServers": {"fs": {"command": "npx", "args": ["-y", "server-fs"]}}})", &path);
    EXPECT_NE(msg.find("this is an MCP client's server list (mcpServers)"), std::string::npos) << msg;
    EXPECT_NE(msg.find("use --import " + path), std::string::npos) << msg;
    // VS Code's, with its comments.
    msg = error_of("// .vscode/mcp.json\n{\"servers\": {\"x\": {\"type\": \"stdio\", \"command\": \"x\"}}}\n");
    EXPECT_NE(msg.find("(servers)"), std::string::npos) << msg;
}

TEST_F(ConfigTest, EveryErrorNamesTheFileAndLine) {
    unset_env("TOOLPORT_UT_NOT_SET_29");
    auto msg = error_of("server:\n  name: ${TOOLPORT_UT_NOT_SET_29}\n");
    EXPECT_NE(msg.find("bad.yaml:2: server.name: environment variable TOOLPORT_UT_NOT_SET_29 is not set"),
              std::string::npos)
        << msg;
    msg = error_of("http:\n  listen: 127.0.0.1:1\n  bearer_tokens_file: /nonexistent/toolport-tokens\n");
    EXPECT_NE(msg.find("bad.yaml:3: http.bearer_tokens_file: cannot read the bearer token file"), std::string::npos)
        << msg;
    msg = error_of("sessions: shared\n");
    EXPECT_NE(msg.find("bad.yaml: sessions: shared needs the Redis store"), std::string::npos) << msg;
}

TEST_F(ConfigTest, PacksTakesACommaListLikeTheFlag) {
    auto config = load_config(write("packs.yaml", "packs: conformance, context\n"));
    EXPECT_EQ(config.packs, (std::vector<std::string>{"conformance", "context"}));
    EXPECT_NE(error_of("packs: conformance, nope\n").find("bad.yaml:1: packs: unknown pack \"nope\""),
              std::string::npos);
}

TEST_F(ConfigTest, UnknownKeyInEverySection) {
    EXPECT_NE(error_of("server:\n  nam: x\n").find("server.nam"), std::string::npos);
    EXPECT_NE(error_of("stdio:\n  max_json_depth: 3\n").find("stdio.max_json_depth"), std::string::npos);
    EXPECT_NE(error_of("log:\n  lvl: x\n").find("log.lvl"), std::string::npos);
}

TEST_F(ConfigTest, WrongTypeNamesTheKey) {
    auto msg = error_of("http:\n  max_sessions: \"lots\"\n");
    EXPECT_NE(msg.find("bad.yaml:2:"), std::string::npos) << msg;
    EXPECT_NE(msg.find("http.max_sessions"), std::string::npos) << msg;
    EXPECT_NE(msg.find("integer"), std::string::npos) << msg;
    EXPECT_NE(msg.find("lots"), std::string::npos) << msg;

    EXPECT_NE(error_of("http:\n  max_sessions: 12abc\n").find("http.max_sessions"), std::string::npos);
    EXPECT_NE(error_of("http:\n  max_sessions: 1.5\n").find("http.max_sessions"), std::string::npos);
    EXPECT_NE(error_of("http:\n  max_sessions: [1]\n").find("http.max_sessions"), std::string::npos);
    EXPECT_NE(error_of("http:\n  max_sessions:\n").find("http.max_sessions"), std::string::npos);
    EXPECT_NE(error_of("server:\n  page_size: 99999999999999999999999\n").find("server.page_size"), std::string::npos);
}

TEST_F(ConfigTest, OutOfRangeIntegers) {
    auto msg = error_of("http:\n  max_sessions: 0\n");
    EXPECT_NE(msg.find("http.max_sessions"), std::string::npos) << msg;
    EXPECT_NE(msg.find("between 1 and"), std::string::npos) << msg;
    EXPECT_NE(error_of("http:\n  max_json_depth: 3\n").find("http.max_json_depth"), std::string::npos);
    EXPECT_NE(error_of("http:\n  sse_retry_ms: -1\n").find("http.sse_retry_ms"), std::string::npos);
    EXPECT_NE(error_of("server:\n  page_size: 10001\n").find("server.page_size"), std::string::npos);
}

TEST_F(ConfigTest, OtherWrongValues) {
    auto b = error_of("http:\n  legacy_sse: maybe\n");
    EXPECT_NE(b.find("http.legacy_sse"), std::string::npos) << b;
    EXPECT_NE(b.find("maybe"), std::string::npos) << b;
    auto t = error_of("server:\n  transport: ftp\n");
    EXPECT_NE(t.find("server.transport"), std::string::npos) << t;
    EXPECT_NE(t.find("http or stdio"), std::string::npos) << t;
    auto l = error_of("http:\n  allowed_origins: http://x\n");
    EXPECT_NE(l.find("http.allowed_origins"), std::string::npos) << l;
    EXPECT_NE(l.find("must be a list"), std::string::npos) << l;
    auto s = error_of("server:\n  name: {a: 1}\n");
    EXPECT_NE(s.find("server.name"), std::string::npos) << s;
    auto m = error_of("http: 5\n");
    EXPECT_NE(m.find("must be a mapping"), std::string::npos) << m;
    // (a plain string is a comma-separated list, as the flag takes)
    auto p = error_of("packs:\n  - [conformance]\n");
    EXPECT_NE(p.find("packs"), std::string::npos) << p;
    EXPECT_NE(p.find("must be a string"), std::string::npos) << p;
}

TEST_F(ConfigTest, YamlSyntaxErrorNamesFileAndLine) {
    auto msg = error_of("http:\n  listen: 1\n  path: [unclosed\n");
    EXPECT_NE(msg.find("bad.yaml:"), std::string::npos) << msg;
    EXPECT_NE(msg.find("YAML syntax error"), std::string::npos) << msg;
}

// The configuration goes through the one YAML rule of every file Toolport reads
// (document/document.hpp): a key written twice or a second document is refused, where
// yaml-cpp alone took one of them silently; the spelling of a scalar that rule types as a
// number or a boolean is what the key reads.
TEST_F(ConfigTest, TheOneYamlRuleRefusesDuplicateKeysAndSecondDocuments) {
    auto dup = error_of("server:\n  name: a\n  name: b\n");
    EXPECT_NE(dup.find("bad.yaml:3: duplicate key \"name\""), std::string::npos) << dup;
    auto two = error_of("server:\n  name: a\n---\nserver:\n  name: b\n");
    EXPECT_NE(two.find("2 YAML documents"), std::string::npos) << two;
    auto tag = error_of("server:\n  name: !custom a\n");
    EXPECT_NE(tag.find("bad.yaml:2: unsupported YAML tag"), std::string::npos) << tag;
    auto config = load_config(write("good.yaml", "server:\n  name: 0123\n  title: 1.10\nhttp:\n  legacy_sse: yes\n"));
    EXPECT_EQ(config.server.name, "0123");
    EXPECT_EQ(config.server.title, "1.10");
    EXPECT_TRUE(config.http.legacy_sse);
}

TEST_F(ConfigTest, MissingFileIsConfigError) {
    auto missing = (dir_ / "does-not-exist.yaml").string();
    try {
        (void)load_config(missing);
        FAIL() << "no error";
    } catch (const ConfigError& e) {
        EXPECT_NE(std::string(e.what()).find("does-not-exist.yaml"), std::string::npos) << e.what();
    }
}

TEST_F(ConfigTest, NonScalarKeyIsConfigError) {
    auto path = write("complex-key.yaml", "? [a, b]\n: 1\n");
    try {
        (void)load_config(path);
        FAIL() << "no error";
    } catch (const ConfigError& e) {
        EXPECT_NE(std::string(e.what()).find("complex-key.yaml"), std::string::npos) << e.what();
    } catch (const std::exception& e) {
        FAIL() << "expected ConfigError, got " << typeid(e).name() << ": " << e.what();
    }
}

// ---- ${ENV} expansion ------------------------------------------------------------------------

TEST_F(ConfigTest, EnvExpansionInValues) {
    set_env("TOOLPORT_UT_NAME", "from-env");
    set_env("TOOLPORT_UT_SESSIONS", "42");
    unset_env("TOOLPORT_UT_UNSET_1");
    auto path = write("env.yaml", R"(
server:
  name: ${TOOLPORT_UT_NAME}
  title: "pre-${TOOLPORT_UT_NAME}-post"
  instructions: ${TOOLPORT_UT_UNSET_1:-fallback text}
http:
  max_sessions: ${TOOLPORT_UT_SESSIONS}
  path: ${TOOLPORT_UT_UNSET_1:-/default}
)");
    Config c = load_config(path);
    EXPECT_EQ(c.server.name, "from-env");
    EXPECT_EQ(c.server.title, "pre-from-env-post");
    EXPECT_EQ(c.server.instructions, "fallback text");
    EXPECT_EQ(c.http.max_sessions, 42u);
    EXPECT_EQ(c.http.path, "/default");
}

TEST_F(ConfigTest, EnvDefaultIsNotUsedWhenSet) {
    set_env("TOOLPORT_UT_PATH", "/from-env");
    Config c = load_config(write("env.yaml", "http:\n  path: ${TOOLPORT_UT_PATH:-/default}\n"));
    EXPECT_EQ(c.http.path, "/from-env");
}

TEST_F(ConfigTest, UnsetEnvWithoutDefaultIsAnError) {
    unset_env("TOOLPORT_UT_UNSET_2");
    auto msg = error_of("server:\n  name: ${TOOLPORT_UT_UNSET_2}\n");
    EXPECT_NE(msg.find("TOOLPORT_UT_UNSET_2"), std::string::npos) << msg;
    EXPECT_NE(msg.find("not set"), std::string::npos) << msg;
    EXPECT_NE(msg.find("server.name"), std::string::npos) << msg;
    EXPECT_NE(msg.find("bad.yaml"), std::string::npos) << msg;
}

TEST_F(ConfigTest, ExpandEnvDirectly) {
    set_env("TOOLPORT_UT_A", "alpha");
    set_env("TOOLPORT_UT_EMPTY", "");
    unset_env("TOOLPORT_UT_UNSET_3");
    EXPECT_EQ(expand_env("no variables", "w"), "no variables");
    EXPECT_EQ(expand_env("${TOOLPORT_UT_A}", "w"), "alpha");
    EXPECT_EQ(expand_env("x${TOOLPORT_UT_A}y${TOOLPORT_UT_A}z", "w"), "xalphayalphaz");
    EXPECT_EQ(expand_env("${TOOLPORT_UT_UNSET_3:-d}", "w"), "d");
    EXPECT_EQ(expand_env("${TOOLPORT_UT_UNSET_3:-}", "w"), "");
    EXPECT_EQ(expand_env("${TOOLPORT_UT_A:-d}", "w"), "alpha");
    EXPECT_EQ(expand_env("${TOOLPORT_UT_EMPTY:-d}", "w"), "d");            // empty counts as unset
    EXPECT_EQ(expand_env("cost $5 and $HOME", "w"), "cost $5 and $HOME");  // only ${...} expands
    EXPECT_THROW((void)expand_env("${TOOLPORT_UT_UNSET_3}", "w"), ConfigError);
    EXPECT_THROW((void)expand_env("${TOOLPORT_UT_EMPTY}", "w"), ConfigError);
    try {
        (void)expand_env("abc ${TOOLPORT_UT_A", "where.key");
        FAIL() << "no error";
    } catch (const ConfigError& e) {
        EXPECT_NE(std::string(e.what()).find("where.key"), std::string::npos) << e.what();
        EXPECT_NE(std::string(e.what()).find("unclosed"), std::string::npos) << e.what();
    }
}

// ---- listen ----------------------------------------------------------------------------------

TEST_F(ConfigTest, ApplyListen) {
    HttpOptions h;
    apply_listen(h, "127.0.0.1:9000");
    EXPECT_EQ(h.host, "127.0.0.1");
    EXPECT_EQ(h.port, 9000);

    HttpOptions v6;
    apply_listen(v6, "[::1]:9001");
    EXPECT_EQ(v6.host, "::1");
    EXPECT_EQ(v6.port, 9001);

    HttpOptions port_only;
    port_only.host = "10.1.2.3";
    apply_listen(port_only, ":9002");
    EXPECT_EQ(port_only.host, "10.1.2.3");  // host kept
    EXPECT_EQ(port_only.port, 9002);

    HttpOptions any;
    apply_listen(any, "0.0.0.0:0");
    EXPECT_EQ(any.host, "0.0.0.0");
    EXPECT_EQ(any.port, 0);

    HttpOptions max;
    apply_listen(max, "localhost:65535");
    EXPECT_EQ(max.port, 65535);
}

TEST_F(ConfigTest, ApplyListenErrors) {
    for (const char* bad :
         {"host:notaport", "9000", "127.0.0.1:", "127.0.0.1:65536", "127.0.0.1:-1", "127.0.0.1:80x", "", "[::1]"}) {
        HttpOptions h;
        try {
            apply_listen(h, bad);
            ADD_FAILURE() << "accepted \"" << bad << "\" as host " << h.host << " port " << h.port;
        } catch (const ConfigError& e) {
            EXPECT_NE(std::string(e.what()).find(std::string("\"") + bad + "\""), std::string::npos) << e.what();
        }
    }
    HttpOptions h;
    try {
        apply_listen(h, "host:notaport");
    } catch (const ConfigError& e) {
        EXPECT_NE(std::string(e.what()).find("port"), std::string::npos) << e.what();
    }
}

TEST_F(ConfigTest, ListenFromFile) {
    Config c = load_config(write("l.yaml", "http:\n  listen: \"[::1]:7000\"\n"));
    EXPECT_EQ(c.http.host, "::1");
    EXPECT_EQ(c.http.port, 7000);
    auto msg = error_of("http:\n  listen: nowhere\n");
    EXPECT_NE(msg.find("nowhere"), std::string::npos) << msg;
}

// ---- bearer tokens ---------------------------------------------------------------------------

TEST_F(ConfigTest, BearerTokensFromEnv) {
    set_env("TOOLPORT_UT_TOKENS", "tok-a,tok-b,,tok-c");
    Config c = load_config(write("t.yaml", "http:\n  bearer_tokens_env: TOOLPORT_UT_TOKENS\n"));
    EXPECT_EQ(c.http.bearer_tokens, (std::vector<std::string>{"tok-a", "tok-b", "tok-c"}));
}

TEST_F(ConfigTest, BearerTokensEnvUnsetIsAnError) {
    unset_env("TOOLPORT_UT_TOKENS_UNSET");
    auto msg = error_of("http:\n  bearer_tokens_env: TOOLPORT_UT_TOKENS_UNSET\n");
    EXPECT_NE(msg.find("http.bearer_tokens_env"), std::string::npos) << msg;
    EXPECT_NE(msg.find("TOOLPORT_UT_TOKENS_UNSET"), std::string::npos) << msg;
    EXPECT_NE(msg.find("bad.yaml:2:"), std::string::npos) << msg;
}

TEST_F(ConfigTest, BearerTokensFromFileSkipCommentsAndBlankLines) {
    auto tokens = write("tokens.txt", "# tokens for toolport\n\ntok-1\n   \ntok-2\r\n# old: tok-x\ntok-3  \n\n");
    Config c = load_config(write("t.yaml", "http:\n  bearer_tokens_file: " + tokens + "\n"));
    EXPECT_EQ(c.http.bearer_tokens, (std::vector<std::string>{"tok-1", "tok-2", "tok-3"}));
}

TEST_F(ConfigTest, BearerTokensFromEnvAndFileCombine) {
    set_env("TOOLPORT_UT_TOKENS2", "env-tok");
    auto tokens = write("tokens.txt", "file-tok\n");
    Config c = load_config(
        write("t.yaml", "http:\n  bearer_tokens_env: TOOLPORT_UT_TOKENS2\n  bearer_tokens_file: " + tokens + "\n"));
    EXPECT_EQ(c.http.bearer_tokens, (std::vector<std::string>{"env-tok", "file-tok"}));
}

TEST_F(ConfigTest, BearerTokensFileMissingIsAnError) {
    auto missing = (dir_ / "no-tokens.txt").string();
    auto msg = error_of("http:\n  bearer_tokens_file: " + missing + "\n");
    EXPECT_NE(msg.find("no-tokens.txt"), std::string::npos) << msg;
}

// ---- HTTP I/O threads ------------------------------------------------------------------------

TEST_F(ConfigTest, IoThreads) {
    EXPECT_EQ(load_config("").http.io_threads, 0) << "one event loop unless asked";
    EXPECT_EQ(load_config(write("two.yaml", "http:\n  io_threads: 2\n")).http.io_threads, 2);
    EXPECT_EQ(load_config(write("auto.yaml", "http:\n  io_threads: auto\n")).http.io_threads,
              HttpOptions::kAutoIoThreads);
    EXPECT_EQ(parse_io_threads("0", "--io-threads"), 0);
    EXPECT_EQ(parse_io_threads("64", "--io-threads"), 64);
    for (const char* bad : {"-1", "65", "two", "2x", "", " 2"}) {
        try {
            parse_io_threads(bad, "--io-threads");
            ADD_FAILURE() << "accepted \"" << bad << "\"";
        } catch (const ConfigError& e) {
            EXPECT_NE(std::string(e.what()).find("--io-threads"), std::string::npos) << e.what();
        }
    }
    auto message = error_of("http:\n  io_threads: [2]\n");
    EXPECT_NE(message.find("http.io_threads"), std::string::npos) << message;
    EXPECT_NE(message.find(":2:"), std::string::npos) << message;
    message = error_of("http:\n  io_threads: many\n");
    EXPECT_NE(message.find("or \"auto\""), std::string::npos) << message;
}

// ---- services ---------------------------------------------------------------------------------

TEST_F(ConfigTest, ServicesMayNotTakeTheNamesOfHealthComponents) {
    for (const char* name : {"server", "store"}) {
        auto message = error_of(std::string("services:\n  tango:\n    rate_per_s: 5\n  ") + name +
                                ":\n    rate_per_s: 5\n");
        EXPECT_NE(message.find(std::string("services.") + name), std::string::npos) << message;
        EXPECT_NE(message.find(":4:"), std::string::npos) << message;
        EXPECT_NE(message.find("/health"), std::string::npos) << message;
    }
    auto config = load_config(write("ok.yaml", "services:\n  servers:\n    rate_per_s: 5\n"));
    EXPECT_EQ(config.pipeline.services.count("servers"), 1u);
}

// ---- tools: <name>: task_support --------------------------------------------------------------

TEST_F(ConfigTest, ToolTaskSupportTakesForbiddenOptionalOrRequired) {
    auto config = load_config(write("ok.yaml",
                                    "tools:\n"
                                    "  a: {task_support: forbidden}\n"
                                    "  b: {task_support: optional, timeout_ms: 5000}\n"
                                    "  c: {task_support: required}\n"
                                    "  d: {timeout_ms: 100}\n"));
    EXPECT_EQ(config.pipeline.tools.at("a").task_support, "forbidden");
    EXPECT_EQ(config.pipeline.tools.at("b").task_support, "optional");
    EXPECT_EQ(config.pipeline.tools.at("b").timeout, std::chrono::milliseconds(5000));
    EXPECT_EQ(config.pipeline.tools.at("c").task_support, "required");
    EXPECT_FALSE(config.pipeline.tools.at("d").task_support.has_value());

    auto message = error_of("tools:\n  a:\n    task_support: sometimes\n");
    EXPECT_NE(message.find("tools.a.task_support"), std::string::npos) << message;
    EXPECT_NE(message.find(":3:"), std::string::npos) << message;
    EXPECT_NE(message.find("forbidden, optional or required"), std::string::npos) << message;
    EXPECT_NE(message.find("sometimes"), std::string::npos) << message;
    message = error_of("tools:\n  a:\n    task_support: [optional]\n");
    EXPECT_NE(message.find("tools.a.task_support"), std::string::npos) << message;
    // A tool's setting, not a source's or the pipeline's.
    message = error_of("sources:\n  conformance:\n    task_support: optional\n");
    EXPECT_NE(message.find("sources.conformance.task_support"), std::string::npos) << message;
    message = error_of("pipeline:\n  task_support: optional\n");
    EXPECT_NE(message.find("pipeline.task_support"), std::string::npos) << message;
}

TEST_F(ConfigTest, ToolTaskSupportReplacesWhatTheToolDeclaresInToolsList) {
    auto config = load_config(write("tasks.yaml",
                                    "packs: [conformance]\n"
                                    "tools:\n"
                                    "  test_simple_text: {task_support: required}\n"
                                    "  slow_compute: {task_support: forbidden}\n"
                                    "  greet: {task_support: optional}\n"));
    test_support::ManualExecutor exec;
    Runtime runtime(config, exec);
    std::vector<Json> out;
    auto session = runtime.server().open_session([&out](const Json& m, const protocol::RequestId*) { out.push_back(m); },
                                                 CallerIdentity{.session_id = "config-test"});
    session->receive(protocol::Request{1,
                                       "tools/list",
                                       {{"_meta",
                                         {{"io.modelcontextprotocol/protocolVersion", "2026-07-28"},
                                          {"io.modelcontextprotocol/clientCapabilities", Json::object()}}}}});
    exec.run();
    std::map<std::string, Json> listed;
    for (const auto& m : out) {
        if (m.value("id", Json()) != 1) continue;
        ASSERT_TRUE(m.contains("result")) << m.dump();
        for (const auto& tool : m["result"]["tools"]) listed[tool["name"]] = tool;
    }
    ASSERT_TRUE(listed.count("test_simple_text") && listed.count("slow_compute") && listed.count("greet"));
    EXPECT_EQ(listed["test_simple_text"]["execution"], (Json{{"taskSupport", "required"}}));
    EXPECT_FALSE(listed["slow_compute"].contains("execution")) << listed["slow_compute"].dump();
    EXPECT_EQ(listed["greet"]["execution"], (Json{{"taskSupport", "optional"}}));
    // A tool the file does not name keeps its own declaration.
    ASSERT_TRUE(listed.count("failing_job"));
    EXPECT_EQ(listed["failing_job"]["execution"]["taskSupport"], "required");
    session->close();
    exec.run();
}

// ---- auth: (OAuth 2.1 resource server) ------------------------------------------------------

TEST_F(ConfigTest, AuthSectionSetsTheResourceServer) {
    Config c = load_config(write("auth.yaml", R"(
auth:
  issuer: https://auth.example.com
  resource: https://mcp.example.com/mcp
  scopes_supported: [mcp:tools, mcp:admin]
  required_scopes: [mcp:tools]
  clock_skew_s: 30
  jwks_refetch_floor_ms: 250
)"));
    const auto& o = c.http.oauth;
    EXPECT_EQ(o.issuer, "https://auth.example.com");
    EXPECT_EQ(o.resource, "https://mcp.example.com/mcp");
    EXPECT_EQ(o.scopes_supported, (std::vector<std::string>{"mcp:tools", "mcp:admin"}));
    EXPECT_EQ(o.required_scopes, (std::vector<std::string>{"mcp:tools"}));
    EXPECT_FALSE(o.allow_http);
    EXPECT_EQ(o.clock_skew, std::chrono::seconds(30));
    EXPECT_EQ(o.jwks_refetch_floor, std::chrono::milliseconds(250));
    EXPECT_EQ(o.authenticator, nullptr);  // `toolport serve` makes it
}

TEST_F(ConfigTest, AuthDefaults) {
    Config none = load_config("");
    EXPECT_TRUE(none.http.oauth.issuer.empty());
    Config c = load_config(
        write("auth.yaml", "auth:\n  issuer: https://auth.example.com/tenant1\n  required_scopes: [a, b]\n"));
    EXPECT_EQ(c.http.oauth.issuer, "https://auth.example.com/tenant1");
    EXPECT_EQ(c.http.oauth.resource, "");  // derived from the listen address when serving
    EXPECT_EQ(c.http.oauth.clock_skew, std::chrono::seconds(60));
    EXPECT_EQ(c.http.oauth.jwks_refetch_floor, std::chrono::milliseconds(30'000));
    // The required scopes are published when no other list is given.
    EXPECT_EQ(c.http.oauth.scopes_supported, (std::vector<std::string>{"a", "b"}));
    Config http = load_config(write("auth.yaml", "auth:\n  issuer: http://127.0.0.1:9000\n  allow_http: true\n"));
    EXPECT_TRUE(http.http.oauth.allow_http);
    EXPECT_EQ(http.http.oauth.issuer, "http://127.0.0.1:9000");
}

TEST_F(ConfigTest, AuthErrorsNameFileLineAndKey) {
    std::string path;
    auto msg = error_of("auth:\n  issuer: http://auth.example.com\n", &path);
    EXPECT_NE(msg.find(path + ":2:"), std::string::npos) << msg;
    EXPECT_NE(msg.find("auth.issuer"), std::string::npos) << msg;
    EXPECT_NE(msg.find("https://"), std::string::npos) << msg;

    msg = error_of("auth:\n  resource: https://mcp.example.com/mcp\n");
    EXPECT_NE(msg.find("auth.issuer: is required"), std::string::npos) << msg;
    msg = error_of("auth:\n  issuer: auth.example.com\n");
    EXPECT_NE(msg.find("auth.issuer: must be an absolute"), std::string::npos) << msg;
    msg = error_of("auth:\n  issuer: https://auth.example.com/?tenant=1\n");
    EXPECT_NE(msg.find("query or fragment"), std::string::npos) << msg;
    msg = error_of("auth:\n  issuer: https://auth.example.com\n  resource: https://mcp.example.com/mcp#x\n");
    EXPECT_NE(msg.find("auth.resource"), std::string::npos) << msg;
    msg = error_of("auth:\n  issuer: https://auth.example.com\n  resource: /mcp\n");
    EXPECT_NE(msg.find("auth.resource: must be an absolute"), std::string::npos) << msg;
    msg = error_of("auth:\n  issuer: https://auth.example.com\n  required_scopes: [\"two words\"]\n");
    EXPECT_NE(msg.find("bad.yaml:3: auth.required_scopes"), std::string::npos) << msg;
    msg = error_of("auth:\n  issuer: https://auth.example.com\n  scopes_supported: [a]\n  required_scopes: [b]\n");
    EXPECT_NE(msg.find("\"b\" is not in auth.scopes_supported"), std::string::npos) << msg;
    msg = error_of("auth:\n  issuer: https://auth.example.com\n  clock_skew_s: 3600\n");
    EXPECT_NE(msg.find("auth.clock_skew_s: must be between 0 and 600"), std::string::npos) << msg;
    msg = error_of("auth:\n  issuer: https://auth.example.com\n  audience: x\n");
    EXPECT_NE(msg.find("auth.audience: unknown key"), std::string::npos) << msg;
    msg = error_of("auth: https://auth.example.com\n");
    EXPECT_NE(msg.find("auth: must be a mapping"), std::string::npos) << msg;
}

// `auth.admin_scope` (the operator's /metrics and /admin/reload) and `reload.min_interval_s`.
TEST_F(ConfigTest, AdminScopeAndReloadInterval) {
    Config c = load_config(write("ops.yaml",
                                 "auth:\n  issuer: https://auth.example.com\n  admin_scope: toolport:admin\n"
                                 "reload:\n  min_interval_s: 10\n"));
    EXPECT_EQ(c.http.oauth.admin_scope, "toolport:admin");
    // Published in the metadata with every other scope configured.
    EXPECT_EQ(c.http.oauth.scopes_supported, (std::vector<std::string>{"toolport:admin"}));
    EXPECT_EQ(c.reload_min_interval, std::chrono::seconds(10));
    Config d = load_config(write("none.yaml", "auth:\n  issuer: https://auth.example.com\n"));
    EXPECT_EQ(d.http.oauth.admin_scope, "");
    EXPECT_EQ(d.reload_min_interval, std::chrono::seconds(3));

    auto msg = error_of("auth:\n  issuer: https://auth.example.com\n  admin_scope: \"two words\"\n");
    EXPECT_NE(msg.find("bad.yaml:3: auth.admin_scope: is not a scope"), std::string::npos) << msg;
    msg = error_of("auth:\n  issuer: https://auth.example.com\n  scopes_supported: [a]\n  admin_scope: ops\n");
    EXPECT_NE(msg.find("auth.admin_scope: \"ops\" is not in auth.scopes_supported"), std::string::npos) << msg;
    msg = error_of("reload:\n  min_interval_s: -1\n");
    EXPECT_NE(msg.find("reload.min_interval_s: must be between 0 and 86400"), std::string::npos) << msg;
    msg = error_of("reload:\n  every_s: 1\n");
    EXPECT_NE(msg.find("reload.every_s: unknown key"), std::string::npos) << msg;
}

// One reload per reload.min_interval_s: asked sooner, the runtime starts nothing and
// reports the last one (its sources, its age, when the next may start).
TEST_F(ConfigTest, ReloadsStartAtMostOncePerInterval) {
    const auto document = write("api.yaml", R"(openapi: 3.1.0
info: {title: t, version: '1'}
paths:
  /things:
    get: {operationId: listThings, responses: {'200': {description: ok}}}
)");
    Config config = load_config(write("reload.yaml", "reload:\n  min_interval_s: 5\nopenapi:\n  demo:\n    document: " +
                                                         document + "\n    base_url: http://127.0.0.1:9/api\n"));
    test_support::ManualExecutor exec;
    Runtime runtime(config, exec);
    auto first = runtime.reload();
    EXPECT_TRUE(first.started);
    EXPECT_EQ(first.sources, (std::vector<std::string>{"demo"}));
    EXPECT_EQ(Json::parse(first.json()), (Json{{"reloading", {"demo"}}, {"started", true}}));
    exec.advance(std::chrono::milliseconds(1000));  // the file is read: the reload is over
    auto second = runtime.reload();
    EXPECT_FALSE(second.started);
    EXPECT_FALSE(second.running);
    EXPECT_EQ(second.sources, (std::vector<std::string>{"demo"}));
    EXPECT_EQ(second.age, std::chrono::milliseconds(1000));
    EXPECT_EQ(second.wait, std::chrono::milliseconds(4000));
    auto body = Json::parse(second.json());
    EXPECT_EQ(body["started"], false);
    EXPECT_EQ(body["retry_after_ms"], 4000);
    EXPECT_NE(body["message"].get<std::string>().find("last reload started 1.0 s ago"), std::string::npos) << body;
    exec.advance(std::chrono::milliseconds(4000));
    EXPECT_TRUE(runtime.reload().started);
}

// `console:`: its defaults, its keys, and the paths and templates it refuses.
TEST_F(ConfigTest, ConsoleSection) {
    auto defaults = load_config("");
    EXPECT_TRUE(defaults.http.console.enabled);
    EXPECT_EQ(defaults.http.console.path, "/console");
    EXPECT_EQ(defaults.http.console.operator_scope, "toolport:operator");
    EXPECT_EQ(defaults.http.console.trace_viewer_url, "");
    auto c = load_config(write("console.yaml",
                               "console:\n  enabled: false\n  path: /ops\n  operator_scope: ops:admin\n"
                               "  trace_viewer_url: https://jaeger.example/trace/{trace_id}\n"));
    EXPECT_FALSE(c.http.console.enabled);
    EXPECT_EQ(c.http.console.path, "/ops");
    EXPECT_EQ(c.http.console.operator_scope, "ops:admin");
    EXPECT_EQ(c.http.console.trace_viewer_url, "https://jaeger.example/trace/{trace_id}");
    EXPECT_NE(error_of("console:\n  path: ops\n").find("console.path"), std::string::npos);
    EXPECT_NE(error_of("console:\n  path: /ops/\n").find("console.path"), std::string::npos);
    EXPECT_NE(error_of("console:\n  path: /mcp\n").find("http.path"), std::string::npos);
    EXPECT_NE(error_of("console:\n  trace_viewer_url: https://jaeger.example/\n").find("{trace_id}"), std::string::npos);
    EXPECT_NE(error_of("console:\n  pth: /x\n").find("path"), std::string::npos);
}
