#include "transports/parsed_request.hpp"

#include "util/http_text.hpp"

namespace toolport {

namespace {
// Past these a cleared request lets its buffers go (what most requests need stays).
constexpr std::size_t kKeptBodyBytes = 64 * 1024;
constexpr std::size_t kKeptFieldBytes = 8 * 1024;
constexpr std::size_t kKeptFields = 64;
}  // namespace

void ParsedRequest::clear() {
    method = HttpMethod::other;
    target.clear();
    version = 11;
    keep_alive = false;
    if (body.capacity() > kKeptBodyBytes) std::string().swap(body);
    else body.clear();
    if (text_.capacity() > kKeptFieldBytes) std::string().swap(text_);
    else text_.clear();
    if (spans_.capacity() > kKeptFields) std::vector<Span>().swap(spans_);
    else spans_.clear();
}

bool ParsedRequest::add_field(std::string_view name, std::string_view value) {
    if (name.size() + value.size() > max_field_bytes_ - text_.size()) return false;
    Span span{static_cast<std::uint32_t>(text_.size()), static_cast<std::uint32_t>(name.size()), 0,
              static_cast<std::uint32_t>(value.size())};
    span.value_at = span.name_at + span.name_size;
    if (text_.capacity() == 0) text_.reserve(512);
    if (spans_.capacity() == 0) spans_.reserve(16);
    text_.append(name).append(value);
    spans_.push_back(span);
    return true;
}

std::pair<std::string_view, std::string_view> ParsedRequest::field(std::size_t i) const {
    const Span& s = spans_[i];
    const std::string_view text(text_);
    return {text.substr(s.name_at, s.name_size), text.substr(s.value_at, s.value_size)};
}

std::optional<std::string_view> ParsedRequest::find(std::string_view name) const {
    // Most names differ in length, and clients mostly spell a name as the endpoint asks for
    // it: both are compared before the letters are, one by one, ignoring case.
    const std::string_view text(text_);
    for (const Span& s : spans_) {
        if (s.name_size != name.size()) continue;
        const std::string_view n = text.substr(s.name_at, s.name_size);
        if (n == name || util::iequals_ascii(n, name)) return text.substr(s.value_at, s.value_size);
    }
    return std::nullopt;
}

void ParsedRequestView::for_each_header(const std::function<void(std::string_view, std::string_view)>& visit) const {
    for (std::size_t i = 0; i < r_.field_count(); ++i) {
        const auto [name, value] = r_.field(i);
        visit(name, value);
    }
}

}  // namespace toolport
