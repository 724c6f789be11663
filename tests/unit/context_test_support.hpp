// Shared by the context pack's tests: a scratch directory tree (removed at the end) and a
// Runtime serving the pack on it, called over an MCP session through the whole pipeline.
#pragma once

#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <boost/asio/io_context.hpp>
#include <gtest/gtest.h>

#include "app/runtime.hpp"
#include "async/asio_executor.hpp"
#include "server/session.hpp"

namespace toolport::test_support {

namespace fs = std::filesystem;

class ScratchDir {
public:
    ScratchDir() {
        std::string pattern = (fs::temp_directory_path() / "toolport-context-XXXXXX").string();
        if (!::mkdtemp(pattern.data())) throw std::runtime_error("mkdtemp failed");
        path_ = fs::canonical(pattern);
    }
    ~ScratchDir() {
        std::error_code ec;
        fs::remove_all(path_, ec);
    }
    const fs::path& path() const { return path_; }

    // Writes `text` at `relative` (parents created).
    fs::path write(const fs::path& relative, const std::string& text) const {
        const fs::path p = path_ / relative;
        fs::create_directories(p.parent_path());
        std::ofstream(p, std::ios::binary) << text;
        return p;
    }
    fs::path mkdir(const fs::path& relative) const {
        fs::create_directories(path_ / relative);
        return path_ / relative;
    }

private:
    fs::path path_;
};

inline std::string read_file(const fs::path& p) {
    std::ifstream in(p, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), {});
}

// A Runtime serving `packs: {context: settings}` with one initialized session.
class ContextServer {
public:
    // `configure` may change the rest of the configuration (e.g. the pipeline's limits).
    explicit ContextServer(Json settings, const std::function<void(Config&)>& configure = {}) {
        using namespace std::chrono_literals;
        Config config;
        config.packs = {"context"};
        config.pack_settings.emplace("context", providers::SourceSettings(std::move(settings), "packs.context"));
        if (configure) configure(config);
        runtime = std::make_unique<Runtime>(config, executor);
        session = runtime->server().open_session([this](const Json& m, const protocol::RequestId*) { out.push_back(m); },
                                                 CallerIdentity{.session_id = "context-test"});
        session->receive(protocol::Request{0, "initialize", {{"protocolVersion", "2025-11-25"}}});
        session->receive(protocol::Notification{"notifications/initialized", nullptr});
        pump([] { return true; });
    }
    ~ContextServer() {
        if (session) session->close();
        io.poll();
    }

    void pump(const std::function<bool()>& done) {
        using namespace std::chrono_literals;
        const auto until = std::chrono::steady_clock::now() + 20s;
        io.restart();
        while (!done() && std::chrono::steady_clock::now() < until) {
            // With nothing queued (a worker thread still busy) the context stops; what the
            // worker posts later must still run.
            if (io.stopped()) io.restart();
            io.run_one_for(20ms);
        }
        io.poll();
    }

    // The result of a request (the whole JSON-RPC message when it is an error).
    Json request(const std::string& method, Json params) {
        const int id = ++next_id;
        session->receive(protocol::Request{id, method, std::move(params)});
        Json answer;
        pump([&] {
            for (const auto& m : out) {
                if (m.value("id", Json()) == id) {
                    answer = m;
                    return true;
                }
            }
            return false;
        });
        if (answer.is_null()) ADD_FAILURE() << "no answer to " << method;
        return answer.contains("result") ? answer["result"] : answer;
    }

    // The structuredContent (the envelope) of tools/call `tool`.
    Json call(const std::string& tool, Json args = Json::object()) {
        Json result = request("tools/call", {{"name", tool}, {"arguments", std::move(args)}});
        last_result = result;
        return result["structuredContent"];
    }

    boost::asio::io_context io;
    AsioExecutor executor{io};
    std::unique_ptr<Runtime> runtime;
    std::shared_ptr<ServerSession> session;
    std::vector<Json> out;
    Json last_result;
    int next_id = 0;
};

}  // namespace toolport::test_support
