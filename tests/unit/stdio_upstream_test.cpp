// The stdio client transport as the gateway uses it for upstream servers: environment and
// working directory of the child, its stderr as lines, its process group (nothing it starts
// outlives it), replies over the size limit, and no file descriptor or process left behind
// after many connections. The children are small /bin/sh scripts that speak just enough
// JSON-RPC: a fresh client's initialize always has id 1 and its next request id 2.
#include <signal.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <thread>

#include <gtest/gtest.h>

#include "async/asio_executor.hpp"
#include "async/executor.hpp"
#include "client/child_process.hpp"
#include "client/sync_client.hpp"

using namespace toolport;
using namespace toolport::client;
using namespace std::chrono_literals;

namespace {

// ------------------------------------------------------------------ helpers

// Shell code answering initialize with serverInfo {name, version}, both shell words (so
// "\"$VAR\"" reports a variable), then reading notifications/initialized.
std::string answer_initialize(const std::string& name = "sh", const std::string& version = "1") {
    return "read -r line; printf '{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"protocolVersion\":\"2025-11-25\","
           "\"capabilities\":{},\"serverInfo\":{\"name\":\"%s\",\"version\":\"%s\"}}}\\n' " +
           name + " " + version + "; read -r line; ";
}

StdioClientOptions shell(const std::string& script) {
    StdioClientOptions options;
    options.argv = {"/bin/sh", "-c", script};
    return options;
}

std::unique_ptr<ClientTransport> transport(SyncClient& client, StdioClientOptions options) {
    return make_stdio_transport(client.executor(), std::move(options));
}

Task<void> poll_until(Executor& executor, std::function<bool()> condition) {
    for (int i = 0; !condition(); ++i) {
        if (i > 1000) throw std::runtime_error("condition not met within 10 s");
        co_await executor.sleep(10ms);
    }
}

struct TempDir {
    TempDir() {
        char pattern[] = "/tmp/toolport-stdio-test-XXXXXX";
        if (!::mkdtemp(pattern)) throw std::runtime_error("mkdtemp failed");
        path = pattern;
    }
    ~TempDir() {
        std::error_code ignored;
        std::filesystem::remove_all(path, ignored);
    }
    std::string path;
};

// The fields of /proc/<pid>/stat after the command name (which may hold spaces):
// state, ppid, pgrp, ... Empty when the process is gone.
std::vector<std::string> stat_fields(pid_t pid) {
    std::ifstream file("/proc/" + std::to_string(pid) + "/stat");
    std::string text((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
    const auto name_end = text.rfind(')');
    if (name_end == std::string::npos) return {};
    std::istringstream rest(text.substr(name_end + 1));
    std::vector<std::string> fields;
    for (std::string field; rest >> field && fields.size() < 3;) fields.push_back(field);
    return fields;
}

// Dead: no such process, or a zombie its new parent (init) has yet to reap.
bool process_gone(pid_t pid) {
    if (::kill(pid, 0) != 0 && errno == ESRCH) return true;
    auto fields = stat_fields(pid);
    return fields.empty() || fields[0] == "Z";
}

bool gone_within(pid_t pid, std::chrono::milliseconds limit = 5s) {
    const auto deadline = std::chrono::steady_clock::now() + limit;
    while (!process_gone(pid)) {
        if (std::chrono::steady_clock::now() > deadline) return false;
        std::this_thread::sleep_for(5ms);
    }
    return true;
}

std::size_t open_fd_count() {
    std::size_t count = 0;
    for ([[maybe_unused]] const auto& entry : std::filesystem::directory_iterator("/proc/self/fd")) ++count;
    return count;
}

std::size_t child_process_count() {
    const std::string me = std::to_string(::getpid());
    std::size_t count = 0;
    std::error_code ec;
    for (const auto& entry : std::filesystem::directory_iterator("/proc", ec)) {
        const std::string name = entry.path().filename();
        if (name.find_first_not_of("0123456789") != std::string::npos) continue;
        auto fields = stat_fields(static_cast<pid_t>(std::stol(name)));
        if (fields.size() >= 2 && fields[1] == me) ++count;
    }
    return count;
}

const std::string kHello = "printf '{\"jsonrpc\":\"2.0\",\"method\":\"hello\"}\\n'; ";

// A bare transport, no McpClient: waits for the child's first message, sends `poke` unless
// null, waits for the transport's end when asked to, then destroys it without close().
void open_and_destroy(StdioClientOptions options, const Json& poke, bool until_closed) {
    SyncClient loop;  // only for its event loop
    auto stdio = transport(loop, std::move(options));
    bool greeted = false;
    bool closed = false;
    ClientTransport::Handlers handlers;
    handlers.on_message = [&](Json) { greeted = true; };
    handlers.on_closed = [&](const std::string&) { closed = true; };
    loop.run(stdio->open(std::move(handlers)));
    loop.run(poll_until(loop.event_loop(), [&]() { return greeted; }));
    if (!poke.is_null()) loop.run(stdio->send(poke));
    if (until_closed) loop.run(poll_until(loop.event_loop(), [&]() { return closed; }));
    stdio.reset();
}

pid_t version_pid(SyncClient& client) {
    return static_cast<pid_t>(std::stol(client.client().server_info()["version"].get<std::string>()));
}

// ------------------------------------------------------------------ environment, directory

// Issue 28, finding 2: a child got all of our environment, our own tokens included.
TEST(StdioUpstream, TheChildInheritsOnlyTheAllowListWithTheOptionsOnTop) {
    ::setenv("TOOLPORT_TEST_SECRET", "ours", 1);
    ::setenv("TOOLPORT_TEST_REPLACED", "ours", 1);
    const char* home = std::getenv("HOME");
    const std::string saved_home = home ? home : "";
    ::setenv("HOME", "/tmp/toolport-test-home", 1);
    auto options = shell(
        answer_initialize("\"$TOOLPORT_TEST_SECRET|$TOOLPORT_TEST_REPLACED|$TOOLPORT_TEST_ADDED|$HOME\"") +
        "exec cat >/dev/null");
    options.env = {{"TOOLPORT_TEST_REPLACED", "theirs"}, {"TOOLPORT_TEST_ADDED", "a new value"}};
    {
        SyncClient client;
        client.connect(transport(client, options));
        EXPECT_EQ(client.client().server_info()["name"], "|theirs|a new value|/tmp/toolport-test-home");
        client.close();
    }
    // Everything, when asked for.
    options.inherit_env = true;
    {
        SyncClient client;
        client.connect(transport(client, options));
        EXPECT_EQ(client.client().server_info()["name"], "ours|theirs|a new value|/tmp/toolport-test-home");
        client.close();
    }
    ::unsetenv("TOOLPORT_TEST_SECRET");
    ::unsetenv("TOOLPORT_TEST_REPLACED");
    if (home) ::setenv("HOME", saved_home.c_str(), 1);
    else ::unsetenv("HOME");
}

TEST(StdioUpstream, TheChildSeesNoOtherVariable) {
    ::setenv("TOOLPORT_TEST_SECRET", "ours", 1);
    // `env` prints the child's whole environment, one variable a line, on stderr.
    auto options = shell("env >&2; " + answer_initialize() + "exec cat >/dev/null");
    std::vector<std::string> lines;
    options.on_stderr_line = [&](std::string_view line) { lines.emplace_back(line); };
    SyncClient client;
    client.connect(transport(client, options));
    client.close();
    ::unsetenv("TOOLPORT_TEST_SECRET");
    ASSERT_FALSE(lines.empty());
    const std::set<std::string> allowed = {"PATH", "HOME", "LANG", "TERM", "USER", "LOGNAME", "SHELL", "TMPDIR",
                                           // what /bin/sh sets for itself
                                           "PWD", "OLDPWD", "SHLVL", "_"};
    for (const auto& line : lines) {
        const std::string name = line.substr(0, line.find('='));
        EXPECT_TRUE(allowed.count(name)) << line;
    }
}

TEST(StdioUpstream, APathInTheEnvironmentIsWhereTheProgramIsFound) {
    TempDir dir;
    const std::string script = dir.path + "/toolport-test-upstream";
    std::ofstream(script) << "#!/bin/sh\n" << answer_initialize("found") << "exec cat >/dev/null\n";
    ::chmod(script.c_str(), 0755);

    StdioClientOptions options;
    options.argv = {"toolport-test-upstream"};
    {
        SyncClient client;
        EXPECT_THROW(client.connect(transport(client, options)), TransportError) << "not in our PATH";
    }
    options.env = {{"PATH", "/nonexistent:" + dir.path + ":/usr/bin:/bin"}};
    SyncClient client;
    client.connect(transport(client, options));
    EXPECT_EQ(client.client().server_info()["name"], "found");
}

TEST(StdioUpstream, ImpossibleEnvironmentVariablesAreRefused) {
    for (const auto& [name, value] :
         std::map<std::string, std::string>{{"A=B", "x"}, {"", "x"}, {"A", std::string("x\0y", 3)}}) {
        auto options = shell("exit 0");
        options.env = {{name, value}};
        SyncClient client;
        try {
            client.connect(transport(client, options));
            FAIL() << "expected TransportError for " << name;
        } catch (const TransportError& e) {
            EXPECT_NE(std::string(e.what()).find("environment variable"), std::string::npos) << e.what();
        }
    }
}

TEST(StdioUpstream, RunsInTheWorkingDirectory) {
    TempDir dir;
    auto options = shell(answer_initialize("sh", "\"$(pwd -P)\"") + "exec cat >/dev/null");
    options.cwd = dir.path;
    SyncClient client;
    client.connect(transport(client, options));
    EXPECT_EQ(client.client().server_info()["version"], std::filesystem::canonical(dir.path).string());
}

TEST(StdioUpstream, AMissingWorkingDirectoryIsNamed) {
    auto options = shell("exit 0");
    options.cwd = "/nonexistent/toolport-test-dir";
    {
        SyncClient client;
        try {
            client.connect(transport(client, options));
            FAIL() << "expected TransportError";
        } catch (const TransportError& e) {
            EXPECT_EQ(std::string(e.what()),
                      "cannot start \"/bin/sh\": working directory \"/nonexistent/toolport-test-dir\": No such file or "
                      "directory");
        }
    }
    options.cwd = "/bin/sh";
    SyncClient client;
    try {
        client.connect(transport(client, options));
        FAIL() << "expected TransportError";
    } catch (const TransportError& e) {
        EXPECT_EQ(std::string(e.what()), "cannot start \"/bin/sh\": working directory \"/bin/sh\" is not a directory");
    }
}

// ------------------------------------------------------------------ stderr

TEST(StdioUpstream, StderrLinesArriveInOrder) {
    auto options = shell(
        "printf 'first\\n\\nsecond\\r\\nthird\\n' >&2; "
        "head -c 20000 /dev/zero | tr '\\0' x >&2; printf '\\n' >&2; " +
        answer_initialize() + "printf 'last words without a newline' >&2; exec cat >/dev/null");
    std::vector<std::string> lines;
    options.on_stderr_line = [&](std::string_view line) { lines.emplace_back(line); };
    SyncClient client;
    client.connect(transport(client, options));
    client.run(poll_until(client.event_loop(), [&]() { return lines.size() >= 6; }));
    client.close();

    // A line longer than 8 KiB is cut there; the rest of it is skipped.
    const std::vector<std::string> expected = {
        "first", "", "second", "third", std::string(8192, 'x'), "last words without a newline"};
    EXPECT_EQ(lines, expected);
}

TEST(StdioUpstream, AChildsLastStderrLinesComeBeforeTheNewsOfItsEnd) {
    auto options = shell(answer_initialize() + "read -r line; printf 'fatal: out of cheese\\n' >&2; exit 4");
    std::vector<std::string> lines;
    std::vector<std::string> lines_at_disconnect;
    options.on_stderr_line = [&](std::string_view line) { lines.emplace_back(line); };
    SyncClient client;
    client.connect(transport(client, options));
    client.client().on_disconnect([&](const std::string&) { lines_at_disconnect = lines; });
    try {
        client.request("test/crash");
        FAIL() << "expected TransportError";
    } catch (const TransportError& e) {
        EXPECT_NE(std::string(e.what()).find("exited with status 4"), std::string::npos) << e.what();
    }
    EXPECT_EQ(lines_at_disconnect, std::vector<std::string>{"fatal: out of cheese"});
}

TEST(StdioUpstream, WithoutAHandlerStderrIsOurs) {
    char ours[4096];
    const ssize_t n = ::readlink("/proc/self/fd/2", ours, sizeof ours - 1);
    ASSERT_GT(n, 0);
    SyncClient client;
    client.connect(
        transport(client, shell(answer_initialize("sh", "\"$(readlink /proc/$$/fd/2)\"") + "exec cat >/dev/null")));
    EXPECT_EQ(client.client().server_info()["version"], std::string(ours, static_cast<std::size_t>(n)));
}

// ------------------------------------------------------------------ process group

TEST(StdioUpstream, AGrandchildGoesOnClose) {
    // The child leads its own group; `sleep` is in it, holding the child's stdout too.
    SyncClient client;
    client.connect(transport(client, shell("sleep 300 & " + answer_initialize("$$", "$!") + "exec cat >/dev/null")));
    const pid_t child = static_cast<pid_t>(std::stol(client.client().server_info()["name"].get<std::string>()));
    const pid_t grandchild = version_pid(client);
    ASSERT_EQ(::kill(grandchild, 0), 0) << "the grandchild runs";
    EXPECT_EQ(::getpgid(child), child) << "the child leads a process group";
    EXPECT_EQ(::getpgid(grandchild), child) << "the grandchild is in it";
    client.close();
    EXPECT_TRUE(process_gone(child));
    EXPECT_TRUE(gone_within(grandchild));
}

TEST(StdioUpstream, AStubbornGrandchildGoesOnClose) {
    // The child ignores its stdin's end and SIGTERM, and so does the grandchild: the
    // group's SIGKILL takes both.
    SyncClient client;
    auto options = shell("trap '' TERM; sh -c 'trap \"\" TERM; exec sleep 300' & " + answer_initialize("sh", "$!") +
                         "while :; do sleep 1; done");
    options.shutdown_grace = 50ms;
    client.connect(transport(client, options));
    const pid_t grandchild = version_pid(client);
    client.close();
    EXPECT_TRUE(gone_within(grandchild));
}

TEST(StdioUpstream, AGrandchildGoesWithTheTransport) {
    SyncClient client;  // only for its event loop
    auto stdio = transport(client,
                           shell("sleep 300 & printf '{\"jsonrpc\":\"2.0\",\"method\":\"pids\","
                                 "\"params\":{\"child\":%s,\"grandchild\":%s}}\\n' $$ $!; exec cat >/dev/null"));
    Json pids;
    ClientTransport::Handlers handlers;
    handlers.on_message = [&](Json message) { pids = message["params"]; };
    client.run(stdio->open(std::move(handlers)));
    client.run(poll_until(client.event_loop(), [&]() { return !pids.is_null(); }));
    stdio.reset();  // no close(): the destructor kills the group at once
    EXPECT_TRUE(process_gone(pids["child"].get<pid_t>())) << "killed and reaped";
    EXPECT_TRUE(gone_within(pids["grandchild"].get<pid_t>()));
}

TEST(StdioUpstream, AGrandchildGoesWithAChildProcessObject) {
    pid_t grandchild = 0;
    {
        ChildProcessOptions options;
        options.argv = {"/bin/sh", "-c", "sleep 300 & echo $!; exec cat >/dev/null"};
        ChildProcess child(options);
        const int from_child = child.take_stdout();
        char text[32] = {};
        const ssize_t n = ::read(from_child, text, sizeof text - 1);
        ::close(from_child);
        ASSERT_GT(n, 0);
        grandchild = static_cast<pid_t>(std::stol(text));
        ASSERT_EQ(::kill(grandchild, 0), 0);
    }
    EXPECT_TRUE(gone_within(grandchild));
}

TEST(StdioUpstream, AChildThatDiesTakesItsGrandchildAndEndsTheConnection) {
    // The grandchild holds the child's stdout open, so only the child's exit itself can
    // tell that it is gone.
    SyncClient client;
    client.connect(transport(client, shell("sleep 300 & " + answer_initialize("sh", "$!") + "read -r line; exit 3")));
    const pid_t grandchild = version_pid(client);
    std::string reason;
    client.client().on_disconnect([&](const std::string& r) { reason = r; });
    RequestOptions quick;
    quick.timeout = 20s;
    const auto started = std::chrono::steady_clock::now();
    try {
        client.request("test/die", Json::object(), quick);
        FAIL() << "expected TransportError";
    } catch (const TransportError& e) {
        EXPECT_NE(std::string(e.what()).find("exited with status 3"), std::string::npos) << e.what();
    }
    EXPECT_LT(std::chrono::steady_clock::now() - started, 10s);
    EXPECT_NE(reason.find("exited with status 3"), std::string::npos) << reason;
    EXPECT_TRUE(gone_within(grandchild));
}

// ------------------------------------------------------------------ oversized replies

struct Outcome {
    bool done = false;
    std::optional<Json> value;
    std::exception_ptr error;
};

void start_request(McpClient& client, const std::string& method, Outcome& outcome) {
    spawn(client.request(method, Json::object()), [&outcome](std::optional<Json> value, std::exception_ptr error) {
        outcome.value = std::move(value);
        outcome.error = error;
        outcome.done = true;
    });
}

TEST(StdioUpstream, AnOversizedReplyFailsOnlyItsRequest) {
    // Both requests are read before either is answered; the first answer is 100 kB with
    // the id after a nested one, the second is small.
    const std::string head = R"({"jsonrpc":"2.0","result":{"content":[{"type":"text","text":")";
    const std::string tail = R"("},{"id":99}]},"id":2})";
    auto options = shell(answer_initialize() + "read -r first; read -r second; printf '%s' '" + head +
                         "'; head -c 100000 /dev/zero | tr '\\0' x; printf '%s\\n' '" + tail +
                         "'; printf '{\"jsonrpc\":\"2.0\",\"id\":3,\"result\":{\"ok\":true}}\\n'; exec cat >/dev/null");
    options.max_message_bytes = 4096;
    ClientOptions client_options;
    client_options.request_timeout = 30s;
    SyncClient client(client_options);
    client.connect(transport(client, options));

    Outcome big, small;
    const auto started = std::chrono::steady_clock::now();
    start_request(client.client(), "test/big", big);
    start_request(client.client(), "test/small", small);
    client.run(poll_until(client.event_loop(), [&]() { return big.done && small.done; }));
    EXPECT_LT(std::chrono::steady_clock::now() - started, 10s) << "not left to its timeout";

    ASSERT_TRUE(big.error);
    try {
        std::rethrow_exception(big.error);
    } catch (const ResponseTooLarge& e) {
        EXPECT_EQ(e.size, head.size() + 100000 + tail.size());
        EXPECT_EQ(e.limit, 4096u);
        EXPECT_TRUE(e.read_so_far);
        EXPECT_NE(std::string(e.what()).find("test/big"), std::string::npos) << e.what();
    } catch (const std::exception& e) {
        FAIL() << "expected ResponseTooLarge, got " << e.what();
    }
    ASSERT_FALSE(small.error);
    EXPECT_EQ((*small.value)["ok"], true);
    EXPECT_TRUE(client.client().is_open()) << "the connection goes on";
}

TEST(StdioUpstream, AnOversizedServerRequestFailsNoRequestOfOurs) {
    // The server's own request has the same id as ours (2); dropping it must not fail ours.
    auto options = shell(answer_initialize() +
                         "read -r line; printf '{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"sampling/createMessage\","
                         "\"params\":{\"x\":\"'; head -c 10000 /dev/zero | tr '\\0' x; printf '\"}}\\n'; "
                         "printf '{\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{\"ok\":true}}\\n'; exec cat >/dev/null");
    options.max_message_bytes = 4096;
    SyncClient client;
    client.connect(transport(client, options));
    EXPECT_EQ(client.request("test/ours")["ok"], true);
}

// ------------------------------------------------------------------ nothing left behind

TEST(StdioUpstream, OpenCloseCyclesLeaveNoFdOrProcess) {
    auto cycle = [](int i) {
        auto options = shell("printf 'hello from stderr\\n' >&2; " + answer_initialize() + "exec cat >/dev/null");
        // Without a handler the child's stderr is ours: keep the test's output clean.
        if (i % 2 == 0) options.on_stderr_line = [](std::string_view) {};
        else options.argv[2] = "exec 2>/dev/null; " + options.argv[2];
        if (i % 10 == 3) options.argv = {"/nonexistent/toolport-test-program"};  // the spawn fails
        if (i % 10 == 7) options.cwd = "/nonexistent/toolport-test-dir";         // refused before it
        if (i % 10 == 1 || i % 10 == 5) {  // the transport's destructor instead of close()
            options.argv[2] = kHello + "exec cat >/dev/null";
            open_and_destroy(std::move(options), nullptr, false);
            return;
        }
        SyncClient client;
        try {
            client.connect(transport(client, options));
        } catch (const TransportError&) {
            EXPECT_TRUE(i % 10 == 3 || i % 10 == 7) << "iteration " << i;
            return;
        }
        client.close();
    };
    cycle(0);  // whatever is set up once (the loop's first use, SIGPIPE) is not a leak
    const std::size_t fds = open_fd_count();
    const std::size_t children = child_process_count();
    for (int i = 0; i < 200; ++i) cycle(i);
    EXPECT_EQ(open_fd_count(), fds);
    EXPECT_EQ(child_process_count(), children);
}

TEST(StdioUpstream, CrashCyclesLeaveNoFdOrProcess) {
    auto cycle = [](int i) {
        auto options = shell(answer_initialize() + "sleep 300 & read -r line; printf 'dying\\n' >&2; kill -9 $$");
        // Without a handler the child's stderr is ours: keep the test's output clean.
        if (i % 2 == 0) options.on_stderr_line = [](std::string_view) {};
        else options.argv[2] = "exec 2>/dev/null; " + options.argv[2];
        if (i % 4 == 1) {  // noticed by a bare transport, which is then destroyed
            options.argv[2] = kHello + "sleep 300 & read -r line; kill -9 $$";
            open_and_destroy(std::move(options), Json{{"jsonrpc", "2.0"}, {"method", "poke"}}, true);
            return;
        }
        SyncClient client;
        client.connect(transport(client, options));
        try {
            client.request("test/crash");
            ADD_FAILURE() << "expected TransportError";
        } catch (const TransportError& e) {
            EXPECT_NE(std::string(e.what()).find("killed by signal 9"), std::string::npos) << e.what();
        }
        client.close();
    };
    cycle(0);
    const std::size_t fds = open_fd_count();
    const std::size_t children = child_process_count();
    for (int i = 0; i < 200; ++i) cycle(i);
    EXPECT_EQ(open_fd_count(), fds);
    EXPECT_EQ(child_process_count(), children);
}

}  // namespace
