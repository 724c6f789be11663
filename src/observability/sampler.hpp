// Which traces are recorded: the OpenTelemetry samplers named by OTEL_TRACES_SAMPLER.
// Parent-based ones follow the caller's sampled flag when a request carries a trace
// context, and decide by the root sampler otherwise; the ratio sampler decides from the
// trace id alone, so every process of one trace decides alike.
#pragma once

#include <optional>
#include <string_view>

#include "observability/trace_context.hpp"

namespace toolport::observability {

class Sampler {
public:
    enum class Root { always_on, always_off, ratio };

    Sampler() = default;
    Sampler(Root root, double ratio, bool parent_based);

    // The names of OTEL_TRACES_SAMPLER (always_on, always_off, traceidratio,
    // parentbased_always_on, parentbased_always_off, parentbased_traceidratio) and the
    // ratio of OTEL_TRACES_SAMPLER_ARG (0..1; ignored by the others); nullopt for an
    // unknown name or a ratio outside 0..1.
    static std::optional<Sampler> named(std::string_view name, double ratio = 1.0);

    // `parent`: the remote or local parent's context, or nullptr for a root span.
    bool sample(const TraceContext* parent, const TraceId& trace_id) const;

private:
    Root root_ = Root::always_on;
    double ratio_ = 1.0;
    bool parent_based_ = true;
};

}  // namespace toolport::observability
