#include "providers/context/metrics/compression.hpp"

#include <algorithm>

#include "providers/context/artifacts/sessions.hpp"
#include "providers/context/durable_files.hpp"
#include "providers/context/envelope.hpp"
#include "providers/context/roots.hpp"
#include "util/json.hpp"

namespace toolport::context {

namespace {

namespace fs = std::filesystem;

std::optional<long long> count_at(const Json& doc, std::initializer_list<const char*> path) {
    const Json* node = &doc;
    for (const char* key : path) {
        if (!node->is_object()) return std::nullopt;
        auto it = node->find(key);
        if (it == node->end()) return std::nullopt;
        node = &*it;
    }
    if (node->is_number_integer()) return node->get<long long>();
    if (node->is_number()) return static_cast<long long>(node->get<double>());
    return std::nullopt;
}

std::optional<Json> read_json(const fs::path& file) {
    std::error_code ec;
    if (fs::symlink_status(file, ec).type() != fs::file_type::regular) return std::nullopt;
    std::string text;
    try {
        // Opened non-blocking and checked again: what is there now may not be what was.
        text = read_regular_file(file, 4u << 20, file.filename().string());
    } catch (const ContextError&) {
        return std::nullopt;  // unreadable metrics are no metrics
    }
    Json doc = Json::parse(text, nullptr, false);
    if (doc.is_discarded()) return std::nullopt;
    return doc;
}

}  // namespace

std::optional<std::pair<long long, long long>> read_token_counts(const Json& doc) {
    const std::initializer_list<const char*> shapes[][2] = {
        {{"compressionMetrics", "inputTokens", "total"}, {"compressionMetrics", "outputArtifacts", "total"}},
        {{"compression", "raw_context_tokens"}, {"compression", "compressed_tokens"}},
        {{"metrics", "original_context_size_tokens"}, {"metrics", "finalization_pack_size_tokens"}},
        {{"tokens", "original"}, {"tokens", "compressed"}},
    };
    for (const auto& shape : shapes) {
        auto original = count_at(doc, shape[0]);
        auto compressed = count_at(doc, shape[1]);
        if (original && compressed) {
            if (*original <= 0 || *compressed < 0) return std::nullopt;
            return std::make_pair(*original, *compressed);
        }
    }
    return std::nullopt;
}

std::optional<CompressionMetrics> session_metrics(const fs::path& project, const std::string& session_id) {
    check_name(session_id, "sessionId");
    const fs::path artifacts = project / ".agent-artifacts";
    for (const fs::path& file :
         {artifacts / session_id / "compression-metrics.json", artifacts / (session_id + ".metrics.json")}) {
        auto doc = read_json(file);
        if (!doc) continue;
        auto counts = read_token_counts(*doc);
        if (!counts) continue;
        return CompressionMetrics{session_id, date_of(session_id), counts->first, counts->second};
    }
    return std::nullopt;
}

std::vector<CompressionMetrics> project_metrics(const fs::path& project) {
    std::vector<std::string> ids = list_sessions(project);
    // Flat metrics files may exist for sessions whose .md is gone.
    std::error_code ec;
    for (fs::directory_iterator it(project / ".agent-artifacts", ec), end; !ec && it != end; it.increment(ec)) {
        const std::string name = it->path().filename().string();
        constexpr std::string_view suffix = ".metrics.json";
        if (name.size() > suffix.size() && name.ends_with(suffix) && name[0] != '.') {
            ids.push_back(name.substr(0, name.size() - suffix.size()));
        }
    }
    std::sort(ids.begin(), ids.end());
    ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
    std::vector<CompressionMetrics> out;
    for (const auto& id : ids) {
        try {
            if (auto m = session_metrics(project, id)) out.push_back(*m);
        } catch (const std::exception&) {
            // an id that is not a plain name is not a session
        }
    }
    std::stable_sort(out.begin(), out.end(), [](const auto& a, const auto& b) {
        return a.date != b.date ? a.date > b.date : a.session_id > b.session_id;
    });
    return out;
}

}  // namespace toolport::context
