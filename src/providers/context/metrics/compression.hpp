// Compression metrics of sessions: how many tokens of context a finalization pack
// replaced. Read from <project>/.agent-artifacts/<sessionId>/compression-metrics.json or
// the flat layout's <sessionId>.metrics.json, in any of the four shapes in use:
//
//   {"compressionMetrics": {"inputTokens": {"total": N}, "outputArtifacts": {"total": M}}}
//   {"compression": {"raw_context_tokens": N, "compressed_tokens": M}}
//   {"metrics": {"original_context_size_tokens": N, "finalization_pack_size_tokens": M}}
//   {"tokens": {"original": N, "compressed": M}}
//
// compressionRatio is a percentage: (original - compressed) / original * 100.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace toolport::context {

struct CompressionMetrics {
    std::string session_id;
    std::string date;
    long long original = 0;
    long long compressed = 0;
    double ratio() const {
        return original > 0 ? (double(original) - double(compressed)) / double(original) * 100.0 : 0;
    }
    long long savings() const { return original - compressed; }
};

// The token counts of one metrics document, or nullopt when it has none of the shapes
// (or an original of 0).
std::optional<std::pair<long long, long long>> read_token_counts(const nlohmann::json& document);

// The metrics of one session of `project`, or nullopt when it has no usable file.
std::optional<CompressionMetrics> session_metrics(const std::filesystem::path& project, const std::string& session_id);

// Every session of `project` that has metrics, newest first.
std::vector<CompressionMetrics> project_metrics(const std::filesystem::path& project);

}  // namespace toolport::context
