// The metrics registry: one hash lookup per update (name + labels), or none through a
// handle (Counter, Gauge, Histogram: a pointer to the series, whose values are atomics),
// Prometheus text format 0.0.4 on render. Misuse (a bad name, a counter decremented, a name used as two types)
// drops the update and warns a few times; it never throws, so a metrics call cannot break
// the request it measures.
#include "observability/metrics.hpp"
#include "observability/metric_help.hpp"

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cmath>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <unordered_map>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "async/log_ids.hpp"

namespace toolport::observability {

namespace {

enum class Kind { counter, gauge, histogram };

std::string_view kind_name(Kind kind) {
    switch (kind) {
        case Kind::counter: return "counter";
        case Kind::gauge: return "gauge";
        case Kind::histogram: return "histogram";
    }
    return "untyped";
}

// Upper bounds of the histogram buckets; the +Inf bucket follows them.
constexpr std::array<double, 15> kBucketBounds = {0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1,
                                                  0.25,   0.5,   1,      2.5,   5,    10,    30};
constexpr std::array<std::string_view, kBucketBounds.size() + 1> kBucketLabels = {"0.0005", "0.001", "0.0025", "0.005",
                                                                                  "0.01",   "0.025", "0.05",   "0.1",
                                                                                  "0.25",   "0.5",   "1",      "2.5",
                                                                                  "5",      "10",    "30",     "+Inf"};

// A family that keeps growing (label values taken from client input, say) stops taking new
// series here instead of growing without bound; existing series keep counting.
constexpr std::size_t kMaxSeriesPerFamily = 10000;
// Misuse is reported this many times per registry, then silently dropped.
constexpr int kMaxWarnings = 20;

bool valid_metric_name(std::string_view name) {
    if (name.empty()) return false;
    for (std::size_t i = 0; i < name.size(); ++i) {
        char c = name[i];
        bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == ':' ||
                  (i > 0 && c >= '0' && c <= '9');
        if (!ok) return false;
    }
    return true;
}

// Label names starting with "__" are reserved for Prometheus itself.
bool valid_label_name(std::string_view name) {
    if (name.empty() || name.substr(0, 2) == "__") return false;
    for (std::size_t i = 0; i < name.size(); ++i) {
        char c = name[i];
        bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || (i > 0 && c >= '0' && c <= '9');
        if (!ok) return false;
    }
    return true;
}

bool sorted_by_name(const Labels& labels) {
    return std::is_sorted(labels.begin(), labels.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
}

// Label order does not make a different series: {a,b} and {b,a} are the same one. Labels
// are kept sorted by name; callers that already pass them sorted pay nothing extra.
struct CanonicalLabels {
    const Labels* labels;
    Labels sorted_copy;

    explicit CanonicalLabels(const Labels& given) : labels(&given) {
        if (!sorted_by_name(given)) {
            sorted_copy = given;
            std::stable_sort(sorted_copy.begin(), sorted_copy.end(),
                             [](const auto& a, const auto& b) { return a.first < b.first; });
            labels = &sorted_copy;
        }
    }
};

struct SeriesKey {
    std::string name;
    Labels labels;
};
// The same key without owning anything: what a lookup builds per update.
struct SeriesKeyView {
    std::string_view name;
    const Labels* labels;
};

void mix(std::size_t& seed, std::size_t h) { seed ^= h + 0x9e3779b97f4a7c15ULL + (seed << 6) + (seed >> 2); }

std::size_t hash_key(std::string_view name, const Labels& labels) {
    std::hash<std::string_view> hs;
    std::size_t seed = hs(name);
    for (const auto& [k, v] : labels) {
        mix(seed, hs(k));
        mix(seed, hs(v));
    }
    return seed;
}

struct KeyHash {
    using is_transparent = void;
    std::size_t operator()(const SeriesKey& k) const noexcept { return hash_key(k.name, k.labels); }
    std::size_t operator()(const SeriesKeyView& k) const noexcept { return hash_key(k.name, *k.labels); }
};

struct KeyEqual {
    using is_transparent = void;
    static bool same(std::string_view an, const Labels& al, std::string_view bn, const Labels& bl) {
        return an == bn && al == bl;
    }
    bool operator()(const SeriesKey& a, const SeriesKey& b) const { return same(a.name, a.labels, b.name, b.labels); }
    bool operator()(const SeriesKeyView& a, const SeriesKey& b) const {
        return same(a.name, *a.labels, b.name, b.labels);
    }
    bool operator()(const SeriesKey& a, const SeriesKeyView& b) const {
        return same(a.name, a.labels, b.name, *b.labels);
    }
};

}  // namespace

namespace detail {

struct MetricFamily {
    Kind kind = Kind::counter;
    MetricsImpl* owner = nullptr;  // for the warnings of updates through handles
    std::vector<MetricSeries*> series;
    bool warned_full = false;
};

// Values are atomics so that handles update them without the registry's lock (from any
// thread); the lock guards the maps, i.e. which series exist.
struct MetricSeries {
    MetricFamily* family = nullptr;
    const Labels* labels = nullptr;  // points into the map's key
    std::atomic<double> value{0};    // counter or gauge
    // Histogram: observations per bucket (not cumulative; render adds them up). The
    // observation count is their total, so _count always equals the +Inf bucket.
    std::array<std::atomic<std::uint64_t>, kBucketLabels.size()> buckets{};
    std::atomic<double> sum{0};
    // Histogram: the last observation per bucket made while a request's code ran, with its
    // trace and span ids (async/log_ids.hpp): the OpenMetrics exemplar that links the bucket
    // to a trace. Written under a spin flag (held for a copy); none while tracing is off.
    struct Exemplar {
        LogIds ids;
        double value = 0;
        double unix_seconds = 0;
    };
    std::array<Exemplar, kBucketLabels.size()> exemplars{};
    mutable std::atomic_flag exemplar_busy = ATOMIC_FLAG_INIT;

    std::uint64_t count() const {
        std::uint64_t n = 0;
        for (const auto& b : buckets) n += b.load(std::memory_order_relaxed);
        return n;
    }
    void add(double by) { value.fetch_add(by, std::memory_order_relaxed); }
    void observe(double v) {
        // A bucket counts observations <= its bound.
        auto bound = std::lower_bound(kBucketBounds.begin(), kBucketBounds.end(), v);
        const auto bucket = static_cast<std::size_t>(bound - kBucketBounds.begin());
        buckets[bucket].fetch_add(1, std::memory_order_relaxed);
        sum.fetch_add(v, std::memory_order_relaxed);
        // An exemplar names a trace a reader can open: a sampled one only (the OpenTelemetry
        // SDKs' default exemplar filter, trace_based).
        if (const LogIds& ids = current_log_ids(); ids.set && ids.sampled) [[unlikely]] {
            const double now = std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
            while (exemplar_busy.test_and_set(std::memory_order_acquire)) {}
            exemplars[bucket] = Exemplar{ids, v, now};
            exemplar_busy.clear(std::memory_order_release);
        }
    }
    Exemplar exemplar(std::size_t bucket) const {
        while (exemplar_busy.test_and_set(std::memory_order_acquire)) {}
        Exemplar e = exemplars[bucket];
        exemplar_busy.clear(std::memory_order_release);
        return e;
    }
};

}  // namespace detail

namespace {

using Family = detail::MetricFamily;
using Series = detail::MetricSeries;

// Prometheus text format 0.0.4: label values escape backslash, double quote and newline.
void append_label_value(std::string& out, std::string_view value) {
    for (char c : value) {
        switch (c) {
            case '\\': out += "\\\\"; break;
            case '"': out += "\\\""; break;
            case '\n': out += "\\n"; break;
            default: out += c;
        }
    }
}

// HELP text escapes backslash and newline (quotes stay as they are).
void append_help(std::string& out, std::string_view help) {
    for (char c : help) {
        switch (c) {
            case '\\': out += "\\\\"; break;
            case '\n': out += "\\n"; break;
            default: out += c;
        }
    }
}

void append_value(std::string& out, double v) {
    if (std::isnan(v)) out += "NaN";
    else if (std::isinf(v)) out += v > 0 ? "+Inf" : "-Inf";
    else fmt::format_to(std::back_inserter(out), "{}", v);
}

// `name{k="v",...,extra_name="extra_value"} ` (no braces when there is no label at all).
void append_series_name(std::string& out, std::string_view name, std::string_view suffix, const Labels& labels,
                        std::string_view extra_name = {}, std::string_view extra_value = {}) {
    out += name;
    out += suffix;
    if (labels.empty() && extra_name.empty()) {
        out += ' ';
        return;
    }
    out += '{';
    bool first = true;
    for (const auto& [k, v] : labels) {
        if (!first) out += ',';
        first = false;
        out += k;
        out += "=\"";
        append_label_value(out, v);
        out += '"';
    }
    if (!extra_name.empty()) {
        if (!first) out += ',';
        out += extra_name;
        out += "=\"";
        out += extra_value;
        out += '"';
    }
    out += "} ";
}

}  // namespace

namespace detail {

struct MetricsImpl {
    mutable std::mutex mutex;
    // Sorted by name: render walks the families in order.
    std::map<std::string, Family, std::less<>> families;
    std::map<std::string, std::string, std::less<>> help;
    // Node-based: Series addresses (and their keys' labels) stay put while the map grows.
    std::unordered_map<SeriesKey, Series, KeyHash, KeyEqual> series;
    int warnings = 0;

    template <typename... Args>
    void warn(fmt::format_string<Args...> format, Args&&... args) {
        if (warnings >= kMaxWarnings) return;
        ++warnings;
        spdlog::warn("metrics: {}", fmt::format(format, std::forward<Args>(args)...));
    }

    bool check_labels(std::string_view name, const Labels& labels, Kind kind) {
        for (std::size_t i = 0; i < labels.size(); ++i) {
            const auto& label = labels[i].first;
            if (!valid_label_name(label)) {
                warn("{}: invalid label name \"{}\"; update dropped", name, label.substr(0, 64));
                return false;
            }
            if (kind == Kind::histogram && label == "le") {
                warn("{}: the label \"le\" is reserved for histogram buckets; update dropped", name);
                return false;
            }
            if (i > 0 && labels[i - 1].first == label) {  // sorted: duplicates are neighbours
                warn("{}: label \"{}\" given twice; update dropped", name, label);
                return false;
            }
        }
        return true;
    }

    // The series for (name, labels) as a `kind`, created on first use; nullptr when the
    // update must be dropped. Called with the mutex held.
    Series* find_or_create(std::string_view name, const Labels& given, Kind kind) {
        CanonicalLabels canonical(given);
        const Labels& labels = *canonical.labels;
        if (auto it = series.find(SeriesKeyView{name, &labels}); it != series.end()) {
            if (it->second.family->kind == kind) return &it->second;
            warn("{} is a {}; {} update dropped", name, kind_name(it->second.family->kind), kind_name(kind));
            return nullptr;
        }
        if (!valid_metric_name(name)) {
            warn("invalid metric name \"{}\"; update dropped", name.substr(0, 64));
            return nullptr;
        }
        if (!check_labels(name, labels, kind)) return nullptr;
        auto fit = families.find(name);
        if (fit == families.end()) {
            fit = families.emplace(std::string(name), Family{kind, this, {}, false}).first;
        } else if (fit->second.kind != kind) {
            warn("{} is a {}; {} update dropped", name, kind_name(fit->second.kind), kind_name(kind));
            return nullptr;
        }
        Family& family = fit->second;
        if (family.series.size() >= kMaxSeriesPerFamily) {
            if (!family.warned_full) {
                family.warned_full = true;
                warn("{} has {} series; new label values are dropped", name, kMaxSeriesPerFamily);
            }
            return nullptr;
        }
        auto [it, inserted] = series.emplace(std::piecewise_construct,
                                             std::forward_as_tuple(SeriesKey{std::string(name), labels}),
                                             std::forward_as_tuple());
        Series& s = it->second;
        s.family = &family;
        s.labels = &it->first.labels;
        family.series.push_back(&s);
        return &s;
    }
};

}  // namespace detail

Metrics::Metrics() : impl_(new detail::MetricsImpl) {}
Metrics::~Metrics() { delete impl_; }

void Metrics::describe(std::string_view name, std::string_view help) {
    std::lock_guard lock(impl_->mutex);
    if (!valid_metric_name(name)) {
        impl_->warn("invalid metric name \"{}\"; description dropped", name.substr(0, 64));
        return;
    }
    impl_->help.insert_or_assign(std::string(name), std::string(help));
}

void Metrics::increment(std::string_view name, const Labels& labels, double by) {
    std::lock_guard lock(impl_->mutex);
    if (!(by >= 0) || std::isinf(by)) {  // also catches NaN
        impl_->warn("{}: a counter only goes up by a finite amount (got {}); update dropped", name, by);
        return;
    }
    if (auto* s = impl_->find_or_create(name, labels, Kind::counter)) s->add(by);
}

void Metrics::set(std::string_view name, const Labels& labels, double value) {
    std::lock_guard lock(impl_->mutex);
    if (auto* s = impl_->find_or_create(name, labels, Kind::gauge)) s->value.store(value, std::memory_order_relaxed);
}

void Metrics::observe(std::string_view name, const Labels& labels, double value) {
    std::lock_guard lock(impl_->mutex);
    if (std::isnan(value)) {
        impl_->warn("{}: NaN observation dropped", name);
        return;
    }
    if (auto* s = impl_->find_or_create(name, labels, Kind::histogram)) s->observe(value);
}

Counter Metrics::counter(std::string_view name, const Labels& labels) {
    std::lock_guard lock(impl_->mutex);
    return Counter(impl_->find_or_create(name, labels, Kind::counter));
}

Gauge Metrics::gauge(std::string_view name, const Labels& labels) {
    std::lock_guard lock(impl_->mutex);
    return Gauge(impl_->find_or_create(name, labels, Kind::gauge));
}

Histogram Metrics::histogram(std::string_view name, const Labels& labels) {
    std::lock_guard lock(impl_->mutex);
    return Histogram(impl_->find_or_create(name, labels, Kind::histogram));
}

namespace {
// The series' family name, for a warning (the family map's key).
std::string_view family_name(const detail::MetricsImpl& impl, const Family* family) {
    for (const auto& [name, f] : impl.families)
        if (&f == family) return name;
    return "?";
}
}  // namespace

void Counter::increment(double by) const {
    if (!series_) return;
    if (!(by >= 0) || std::isinf(by)) [[unlikely]] {  // also catches NaN
        auto& impl = *series_->family->owner;
        std::lock_guard lock(impl.mutex);
        impl.warn("{}: a counter only goes up by a finite amount (got {}); update dropped",
                  family_name(impl, series_->family), by);
        return;
    }
    series_->add(by);
}

void Gauge::set(double value) const {
    if (series_) series_->value.store(value, std::memory_order_relaxed);
}

void Histogram::observe(double value) const {
    if (!series_) return;
    if (std::isnan(value)) [[unlikely]] {
        auto& impl = *series_->family->owner;
        std::lock_guard lock(impl.mutex);
        impl.warn("{}: NaN observation dropped", family_name(impl, series_->family));
        return;
    }
    series_->observe(value);
}

std::optional<double> Metrics::value(std::string_view name, const Labels& labels) const {
    std::lock_guard lock(impl_->mutex);
    CanonicalLabels canonical(labels);
    auto it = impl_->series.find(SeriesKeyView{name, canonical.labels});
    if (it == impl_->series.end()) return std::nullopt;
    const Series& s = it->second;
    return s.family->kind == Kind::histogram ? static_cast<double>(s.count()) : s.value.load(std::memory_order_relaxed);
}

std::string Metrics::render() const { return render_as(false); }

std::string Metrics::render_openmetrics() const { return render_as(true); }

namespace {

// ` # {trace_id="...",span_id="..."} value timestamp` after an OpenMetrics bucket line.
void append_exemplar(std::string& out, const Series::Exemplar& e) {
    static constexpr char kHex[] = "0123456789abcdef";
    out += R"( # {trace_id=")";
    for (auto b : e.ids.trace_id) {
        out += kHex[b >> 4];
        out += kHex[b & 0xF];
    }
    out += R"(",span_id=")";
    for (auto b : e.ids.span_id) {
        out += kHex[b >> 4];
        out += kHex[b & 0xF];
    }
    out += "\"} ";
    append_value(out, e.value);
    fmt::format_to(std::back_inserter(out), " {:.3f}", e.unix_seconds);
}

}  // namespace

std::string Metrics::render_as(bool openmetrics) const {
    std::lock_guard lock(impl_->mutex);
    std::string out;
    out.reserve(256 * impl_->families.size() + 64 * impl_->series.size());
    for (const auto& [name, family] : impl_->families) {
        // OpenMetrics names a counter family without its samples' _total suffix; a counter
        // named otherwise is an `unknown` there (its samples keep their name).
        std::string_view family_name = name;
        std::string_view kind = kind_name(family.kind);
        if (openmetrics && family.kind == Kind::counter) {
            if (family_name.ends_with("_total")) family_name.remove_suffix(6);
            else kind = "unknown";
        }
        out += "# HELP ";
        out += family_name;
        out += ' ';
        if (auto h = impl_->help.find(name); h != impl_->help.end()) append_help(out, h->second);
        else if (auto known = metric_help(name)) append_help(out, *known);
        else out += "Toolport metric " + name + ".";  // a name Toolport itself never records
        out += "\n# TYPE ";
        out += family_name;
        out += ' ';
        out += kind;
        out += '\n';

        std::vector<const Series*> ordered(family.series.begin(), family.series.end());
        std::sort(ordered.begin(), ordered.end(),
                  [](const Series* a, const Series* b) { return *a->labels < *b->labels; });
        for (const Series* s : ordered) {
            if (family.kind != Kind::histogram) {
                append_series_name(out, name, "", *s->labels);
                append_value(out, s->value.load(std::memory_order_relaxed));
                out += '\n';
                continue;
            }
            // One read of each bucket: the +Inf bucket and _count are the same figure even
            // while handles keep observing.
            std::uint64_t cumulative = 0;
            for (std::size_t b = 0; b < kBucketLabels.size(); ++b) {
                cumulative += s->buckets[b].load(std::memory_order_relaxed);
                append_series_name(out, name, "_bucket", *s->labels, "le", kBucketLabels[b]);
                fmt::format_to(std::back_inserter(out), "{}", cumulative);
                if (openmetrics) {
                    if (auto e = s->exemplar(b); e.ids.set) append_exemplar(out, e);
                }
                out += '\n';
            }
            append_series_name(out, name, "_sum", *s->labels);
            append_value(out, s->sum.load(std::memory_order_relaxed));
            out += '\n';
            append_series_name(out, name, "_count", *s->labels);
            fmt::format_to(std::back_inserter(out), "{}\n", cumulative);
        }
    }
    if (openmetrics) out += "# EOF\n";
    return out;
}

Metrics& metrics() {
    // Never destroyed: threads and coroutine frames torn down at exit may still report.
    static Metrics* instance = new Metrics;
    return *instance;
}

}  // namespace toolport::observability
