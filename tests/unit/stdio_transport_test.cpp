// The stdio transport end to end in this process: serve_stdio reads lines from a file and
// writes its replies to another, with a real McpServer behind it.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <string>
#include <thread>
#include <vector>

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>

#include "async/asio_executor.hpp"
#include "protocol/jsonrpc.hpp"
#include "server/server.hpp"
#include "transports/stdio_transport.hpp"
#include "util/json.hpp"

using namespace toolport;

namespace {

const std::string kInitialize2025_03_26 =
    R"({"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-03-26",)"
    R"("capabilities":{},"clientInfo":{"name":"t","version":"1"}}})";
const std::string kInitialized = R"({"jsonrpc":"2.0","method":"notifications/initialized"})";

// A temporary file that closes itself.
struct TempFile {
    std::FILE* file = std::tmpfile();
    ~TempFile() {
        if (file) std::fclose(file);
    }
    int fd() const { return fileno(file); }
};

// What serve_stdio reads its input from: a file (read by its thread), a pipe or a socket
// (watched on its loop).
enum class Stdin { file, pipe, socket };

// Writes `pieces` to serve_stdio's stdin one write each, a pause between them (so that a
// line cut between pieces reaches the server in two reads), then closes it; returns what
// came out on a stdout of `out_kind` (a file, or a non-blocking pipe of one page drained
// late by a slow reader), line by line.
std::vector<std::string> serve_pieces(Stdin kind, const std::vector<std::string>& pieces, StdioOptions options = {},
                                      bool slow_nonblocking_stdout = false) {
    int in[2] = {-1, -1};
    if (kind == Stdin::pipe) EXPECT_EQ(::pipe(in), 0);
    if (kind == Stdin::socket) EXPECT_EQ(::socketpair(AF_UNIX, SOCK_STREAM, 0, in), 0);
    TempFile in_file, out_file;
    if (kind == Stdin::file) {
        for (const auto& piece : pieces)
            EXPECT_EQ(::write(in_file.fd(), piece.data(), piece.size()), ssize_t(piece.size()));
        ::lseek(in_file.fd(), 0, SEEK_SET);
    }
    std::thread writer([&]() {
        if (kind == Stdin::file) return;
        for (const auto& piece : pieces) {
            EXPECT_EQ(::write(in[1], piece.data(), piece.size()), ssize_t(piece.size()));
            std::this_thread::sleep_for(std::chrono::milliseconds(20));
        }
        ::close(in[1]);
    });
    int out[2] = {-1, -1};
    std::string written;
    std::thread drainer;
    if (slow_nonblocking_stdout) {
        EXPECT_EQ(::pipe(out), 0);
        ::fcntl(out[1], F_SETPIPE_SZ, 4096);
        ::fcntl(out[1], F_SETFL, ::fcntl(out[1], F_GETFL) | O_NONBLOCK);
        drainer = std::thread([&]() {
            std::this_thread::sleep_for(std::chrono::milliseconds(300));
            char chunk[512];
            for (ssize_t n; (n = ::read(out[0], chunk, sizeof chunk)) > 0;) {
                written.append(chunk, static_cast<std::size_t>(n));
                std::this_thread::sleep_for(std::chrono::milliseconds(1));
            }
        });
    }

    boost::asio::io_context io(1);
    auto keep_running = boost::asio::make_work_guard(io);
    AsioExecutor executor(io);
    McpServer server(executor, ServerOptions{});
    EXPECT_EQ(serve_stdio(server, executor, options, kind == Stdin::file ? in_file.fd() : in[0],
                          slow_nonblocking_stdout ? out[1] : out_file.fd()),
              0);
    writer.join();
    if (kind != Stdin::file) ::close(in[0]);
    if (slow_nonblocking_stdout) {
        ::close(out[1]);
        drainer.join();
        ::close(out[0]);
    } else {
        ::lseek(out_file.fd(), 0, SEEK_SET);
        char chunk[4096];
        for (ssize_t n; (n = ::read(out_file.fd(), chunk, sizeof chunk)) > 0;)
            written.append(chunk, static_cast<std::size_t>(n));
    }
    std::vector<std::string> replies;
    for (std::size_t start = 0, nl; (nl = written.find('\n', start)) != std::string::npos; start = nl + 1) {
        replies.push_back(written.substr(start, nl - start));
    }
    return replies;
}

// Feeds `lines` to serve_stdio from a file and returns what it wrote to stdout, line by line.
std::vector<std::string> serve_lines(const std::vector<std::string>& lines, StdioOptions options = {}) {
    std::string input;
    for (const auto& line : lines) input += line + "\n";
    return serve_pieces(Stdin::file, {input}, options);
}

void expect_invalid_request_with_null_id(const Json& reply, const std::string& sent) {
    ASSERT_TRUE(reply.is_object()) << sent << " -> " << reply.dump();
    EXPECT_EQ(reply["jsonrpc"], "2.0") << sent;
    ASSERT_TRUE(reply.contains("id")) << sent;
    EXPECT_TRUE(reply["id"].is_null()) << sent << " -> " << reply.dump();
    EXPECT_EQ(reply["error"]["code"], protocol::error_code::kInvalidRequest) << sent << " -> " << reply.dump();
}

// `reply` refuses what was `sent` (Invalid Request, null id) with a message that says `says`.
void expect_refusal(const std::string& reply, const std::string& sent, const std::string& says) {
    Json refusal = Json::parse(reply);
    expect_invalid_request_with_null_id(refusal, sent);
    EXPECT_NE(refusal["error"]["message"].get<std::string>().find(says), std::string::npos) << reply;
}

const std::vector<std::string> kUnanswerableIds = {
    "42",
    "[[1]]",
    R"({"jsonrpc":"2.0","id":true,"method":"ping"})",
    R"({"jsonrpc":"2.0","id":null,"method":"ping"})",
    R"({"jsonrpc":"2.0","id":[],"method":"ping"})",
    R"({"jsonrpc":"2.0","id":{},"method":"ping"})",
};

}  // namespace

TEST(StdioTransport, MessagesWithoutAUsableIdGetAnErrorWithNullIdBeforeInitialize) {
    auto replies = serve_lines(kUnanswerableIds);
    ASSERT_EQ(replies.size(), kUnanswerableIds.size());
    // ([[1]] is refused as a batch: none is allowed before initialize.)
    for (std::size_t i = 0; i < replies.size(); ++i) {
        expect_invalid_request_with_null_id(Json::parse(replies[i]), kUnanswerableIds[i]);
    }
}

TEST(StdioTransport, MessagesWithoutAUsableIdGetAnErrorWithNullIdInABatchingSession) {
    std::vector<std::string> lines = {kInitialize2025_03_26, kInitialized};
    lines.insert(lines.end(), kUnanswerableIds.begin(), kUnanswerableIds.end());
    auto replies = serve_lines(lines);
    ASSERT_EQ(replies.size(), 1 + kUnanswerableIds.size());
    for (std::size_t i = 0; i < kUnanswerableIds.size(); ++i) {
        const auto& sent = kUnanswerableIds[i];
        Json reply = Json::parse(replies[1 + i]);
        if (sent == "[[1]]") {
            // JSON-RPC 2.0 §6: a batch is answered with an array, its unreadable member too.
            ASSERT_TRUE(reply.is_array()) << reply.dump();
            ASSERT_EQ(reply.size(), 1u);
            expect_invalid_request_with_null_id(reply[0], sent);
        } else {
            expect_invalid_request_with_null_id(reply, sent);
        }
    }
}

TEST(StdioTransport, ABatchAnswersItsUnreadableMembersInsideTheArray) {
    auto replies = serve_lines({kInitialize2025_03_26, kInitialized,
                                R"([1,{"jsonrpc":"2.0","id":5,"method":"ping"},{"jsonrpc":"2.0","id":"b","method":7}])"});
    ASSERT_EQ(replies.size(), 2u);
    Json batch = Json::parse(replies[1]);
    ASSERT_TRUE(batch.is_array()) << replies[1];
    ASSERT_EQ(batch.size(), 3u) << replies[1];
    int null_errors = 0, pongs = 0, named_errors = 0;
    for (const auto& reply : batch) {
        if (reply["id"].is_null()) null_errors += reply.contains("error");
        else if (reply["id"] == 5) pongs += reply["result"] == Json::object();
        else if (reply["id"] == "b") named_errors += reply["error"]["code"] == protocol::error_code::kInvalidRequest;
    }
    EXPECT_EQ(null_errors, 1);
    EXPECT_EQ(pongs, 1);
    EXPECT_EQ(named_errors, 1);
}

TEST(StdioTransport, IntegerIdsBeyond64BitsAreEchoedExactly) {
    auto replies = serve_lines({
        kInitialize2025_03_26,
        kInitialized,
        R"({"jsonrpc":"2.0","id":123456789012345678901234567890,"method":"ping"})",
        R"([{"jsonrpc":"2.0","id":18446744073709551616,"method":"ping"},)"
        R"({"jsonrpc":"2.0","id":-9223372036854775809,"method":"ping"}])",
    });
    ASSERT_EQ(replies.size(), 3u);
    EXPECT_EQ(replies[1], R"({"id":123456789012345678901234567890,"jsonrpc":"2.0","result":{}})");
    EXPECT_EQ(replies[2], R"([{"id":18446744073709551616,"jsonrpc":"2.0","result":{}},)"
                          R"({"id":-9223372036854775809,"jsonrpc":"2.0","result":{}}])");
}

TEST(StdioTransport, ABatchOverTheSizeCapIsRefusedWhole) {
    StdioOptions options;
    options.max_batch_size = 2;
    const std::string ping = R"({"jsonrpc":"2.0","id":1,"method":"ping"})";
    auto replies = serve_lines({kInitialize2025_03_26, kInitialized, "[" + ping + "," + ping + "," + ping + "]",
                                R"({"jsonrpc":"2.0","id":9,"method":"ping"})"},
                               options);
    ASSERT_EQ(replies.size(), 3u);
    expect_refusal(replies[1], "a batch of 3", "at most 2 messages; this one has 3");
    EXPECT_EQ(Json::parse(replies[2]), Json::parse(R"({"jsonrpc":"2.0","id":9,"result":{}})"));
}

class StdioInput : public ::testing::TestWithParam<Stdin> {};

INSTANTIATE_TEST_SUITE_P(
    FilePipeSocket, StdioInput, ::testing::Values(Stdin::file, Stdin::pipe, Stdin::socket), [](const auto& info) {
        return std::string(info.param == Stdin::file ? "file" : info.param == Stdin::pipe ? "pipe" : "socket");
    });

TEST_P(StdioInput, LinesCutBetweenReadsAreJoinedAndALastLineWithoutNewlineIsServed) {
    const std::string ping7 = R"({"jsonrpc":"2.0","id":7,"method":"ping"})";
    auto replies = serve_pieces(GetParam(), {kInitialize2025_03_26 + "\n" + kInitialized.substr(0, 10),
                                             kInitialized.substr(10) + "\n" + ping7.substr(0, 5),
                                             ping7.substr(5) + "\n", R"({"jsonrpc":"2.0","id":8,"method":"ping"})"});
    ASSERT_EQ(replies.size(), 3u);
    EXPECT_EQ(Json::parse(replies[0])["id"], 0);
    EXPECT_EQ(Json::parse(replies[1]), Json::parse(R"({"jsonrpc":"2.0","id":7,"result":{}})"));
    EXPECT_EQ(Json::parse(replies[2]), Json::parse(R"({"jsonrpc":"2.0","id":8,"result":{}})"));
}

TEST_P(StdioInput, ALineOverTheLimitIsRefusedOnceAndTheNextLineServed) {
    StdioOptions options;
    options.max_message_bytes = 200;
    const std::string big = R"({"jsonrpc":"2.0","id":5,"method":"ping","params":{"pad":")" + std::string(600, 'x') +
                            R"("}})";
    auto replies = serve_pieces(GetParam(),
                                {kInitialize2025_03_26 + "\n" + kInitialized + "\n", big.substr(0, 300),
                                 big.substr(300) + "\n" + R"({"jsonrpc":"2.0","id":6,"method":"ping"})" + "\n"},
                                options);
    ASSERT_EQ(replies.size(), 3u);
    expect_refusal(replies[1], "a 660-byte line", "exceeds the 200 byte limit");
    EXPECT_EQ(Json::parse(replies[2]), Json::parse(R"({"jsonrpc":"2.0","id":6,"result":{}})"));
}

TEST_P(StdioInput, ANonBlockingStdoutThatFillsUpLosesNoReply) {
    // 200 pings whose replies (~7 KB) outgrow the one-page pipe long before its reader starts.
    std::string pings;
    for (int i = 1; i <= 200; ++i)
        pings += R"({"jsonrpc":"2.0","id":)" + std::to_string(i) + R"(,"method":"ping"})" + "\n";
    auto replies = serve_pieces(GetParam(), {kInitialize2025_03_26 + "\n" + kInitialized + "\n", pings}, {},
                                /*slow_nonblocking_stdout=*/true);
    ASSERT_EQ(replies.size(), 201u);
    for (int i = 1; i <= 200; ++i) EXPECT_EQ(Json::parse(replies[i])["id"], i);
}
