#include "util/redaction/injection_markers.hpp"

#include <algorithm>
#include <initializer_list>

#include "util/redaction/lower_run.hpp"

namespace toolport::util::redaction {

namespace {

bool is_alpha(unsigned char c) { return (c | 0x20) >= 'a' && (c | 0x20) <= 'z'; }
bool is_space(unsigned char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }
char lower(unsigned char c) { return static_cast<char>(c >= 'A' && c <= 'Z' ? c | 0x20 : c); }

// A small lower-cased word read from the text.
struct Word {
    char text[16];
    std::size_t size = 0;
    std::size_t end = 0;  // where the text goes on after it
    bool is(std::string_view w) const { return std::string_view(text, size) == w; }
    bool any_of(std::initializer_list<std::string_view> words) const {
        return std::any_of(words.begin(), words.end(), [this](std::string_view w) { return is(w); });
    }
};

// The word at `at` (letters and apostrophes), lower-cased; size 0 when there is none or it
// is longer than 16 letters.
Word word_at(std::string_view text, std::size_t at) {
    Word w;
    std::size_t p = at;
    while (p < text.size() && (is_alpha(text[p]) || text[p] == '\'')) {
        if (w.size < sizeof w.text) w.text[w.size] = lower(text[p]);
        ++w.size;
        ++p;
    }
    if (w.size > sizeof w.text) w.size = 0;  // longer than any word looked for
    w.end = p;
    return w;
}

// The next word after `at`, past spaces and a comma (at least one space or comma).
Word next_word(std::string_view text, std::size_t at) {
    std::size_t p = at;
    while (p < text.size() && (is_space(text[p]) || text[p] == ',')) ++p;
    if (p == at) return Word{};
    return word_at(text, p);
}

bool ignore_instructions(std::string_view text, const Word& verb) {
    if (!verb.any_of({"ignore", "disregard", "forget", "override", "bypass"})) return false;
    Word w = next_word(text, verb.end);
    for (int i = 0; i < 3 && w.any_of({"all", "any", "the", "of", "your", "my", "these", "those", "every"}); ++i)
        w = next_word(text, w.end);
    if (w.any_of({"everything", "anything"})) {
        w = next_word(text, w.end);
        return w.any_of({"above", "before", "previously", "earlier", "else"});
    }
    if (!w.any_of({"previous", "prior", "above", "earlier", "preceding", "foregoing", "original", "system", "initial",
                   "former", "other", "existing"}))
        return false;
    w = next_word(text, w.end);
    if (w.any_of({"system", "safety"})) w = next_word(text, w.end);
    return w.any_of({"instructions", "instruction", "prompts", "prompt", "directions", "directives", "rules",
                     "messages", "guidelines", "context", "commands", "guardrails"});
}

bool role_override(std::string_view text, const Word& first) {
    if (first.is("you")) {
        Word w = next_word(text, first.end);
        if (!w.is("are")) return false;
        w = next_word(text, w.end);
        if (!w.is("now")) return false;
        w = next_word(text, w.end);
        return w.any_of({"a", "an", "dan", "no", "unrestricted", "jailbroken", "free", "acting", "my", "the"});
    }
    if (first.is("from")) {
        Word w = next_word(text, first.end);
        if (!w.is("now")) return false;
        w = next_word(text, w.end);
        if (!w.is("on")) return false;
        w = next_word(text, w.end);
        return w.any_of({"you", "your", "ignore", "act", "respond", "answer"});
    }
    if (first.is("pretend")) {
        Word w = next_word(text, first.end);
        if (w.is("to")) return next_word(text, w.end).is("be");
        return w.is("you") && next_word(text, w.end).is("are");
    }
    if (first.is("new")) {
        Word w = next_word(text, first.end);
        return (w.is("instructions") || w.is("instruction")) && w.end < text.size() && text[w.end] == ':';
    }
    return false;
}

// "<|im_start|>", "<|system|>", "<<SYS>>" at `at` ('<'), or "[INST]" ('['): its length, or 0.
std::size_t chat_template(std::string_view text, std::size_t at) {
    const std::string_view rest = text.substr(at);
    if (rest.starts_with("<|")) {
        std::size_t p = 2;
        while (p < rest.size() && p < 24 && (is_alpha(rest[p]) || rest[p] == '_')) ++p;
        return p > 2 && rest.substr(p).starts_with("|>") ? p + 2 : 0;
    }
    for (std::string_view tag : {"<<SYS>>", "<</SYS>>", "[INST]", "[/INST]", "[SYSTEM]"}) {
        if (rest.starts_with(tag)) return tag.size();
    }
    return 0;
}

// "<system>", "</system>", "<assistant ...>" at `at`: its length, or 0.
std::size_t role_tag(std::string_view text, std::size_t at) {
    std::size_t p = at + 1;
    if (p < text.size() && text[p] == '/') ++p;
    Word w = word_at(text, p);
    if (!w.any_of({"system", "assistant", "instructions", "sys", "important", "im_start", "im_end", "developer"}))
        return 0;
    // Letters only: "system_prompt" reads as "system" then '_', taken too.
    std::size_t q = w.end;
    while (q < text.size() && (is_alpha(text[q]) || text[q] == '_')) ++q;
    if (q < text.size() && text[q] == '>') return q + 1 - at;
    if (q < text.size() && text[q] == ' ') {
        const std::size_t close = text.find('>', q);
        if (close != std::string_view::npos && close - q < 80) return close + 1 - at;
    }
    return 0;
}

// "IMPORTANT:" (capitals, as tool poisoning writes it) followed within the sentence by
// words addressed to the model.
bool important_directive(std::string_view text, std::size_t at) {
    std::size_t p = at + 9;
    while (p < text.size() && text[p] == '!') ++p;
    if (p >= text.size() || text[p] != ':') return false;
    const std::size_t limit = std::min(text.size(), p + 160);
    for (std::size_t q = p + 1; q < limit; ++q) {
        if (!is_alpha(text[q]) || is_alpha(text[q - 1])) continue;
        Word w = word_at(text, q);
        if (w.any_of({"you", "your", "assistant", "ai", "model", "agent", "llm", "claude", "gpt", "always", "never",
                      "must", "do", "don't"}))
            return true;
        q = w.end ? w.end : q;
    }
    return false;
}

// The first letters of the phrases looked for: ignore, disregard, forget, override, bypass,
// you, from, pretend, new.
bool phrase_start(unsigned char c) {
    switch (c | 0x20) {
        case 'i':
        case 'd':
        case 'f':
        case 'o':
        case 'b':
        case 'y':
        case 'p':
        case 'n': return true;
        default: return false;
    }
}

// The first words of the phrases looked for (the matchers above read on from them).
bool phrase_word(const Word& w) {
    switch (w.size) {
        case 3: return w.is("you") || w.is("new");
        case 4: return w.is("from");
        case 6: return w.is("ignore") || w.is("forget") || w.is("bypass");
        case 7: return w.is("pretend");
        case 8: return w.is("override");
        case 9: return w.is("disregard");
        default: return false;
    }
}

}  // namespace

std::string_view name(Marker m) {
    static constexpr std::string_view names[kMarkerCount] = {"ignore_instructions",  "role_override",
                                                             "chat_template",        "role_tag",
                                                             "important_directive",  "hidden_tags",
                                                             "invisible_characters", "bidi_override"};
    return names[static_cast<std::size_t>(m)];
}

std::uint32_t InjectionFindings::total() const {
    std::uint32_t sum = 0;
    for (auto n : by_marker) sum += n;
    return sum;
}

InjectionFindings& InjectionFindings::operator+=(const InjectionFindings& other) {
    for (std::size_t i = 0; i < kMarkerCount; ++i) by_marker[i] += other.by_marker[i];
    return *this;
}

void scan_injection(std::string_view text, InjectionFindings& found) {
    auto add = [&found](Marker m) { ++found.by_marker[static_cast<std::size_t>(m)]; };
    const std::size_t n = text.size();
    const auto byte = [&text](std::size_t i) { return static_cast<unsigned char>(text[i]); };
    bool in_hidden_run = false;
    for (std::size_t i = 0; i < n; ++i) {
        const unsigned char c = byte(i);
        if (is_alpha(c)) {
            // A word (the loop never stops inside one): only a few first letters can start
            // a phrase looked for; any other word is passed over whole.
            in_hidden_run = false;
            if (c == 'I' && text.compare(i, 9, "IMPORTANT") == 0 && important_directive(text, i))
                add(Marker::important_directive);
            if (phrase_start(c)) {
                const Word w = word_at(text, i);
                if (phrase_word(w)) {
                    if (ignore_instructions(text, w)) add(Marker::ignore_instructions);
                    else if (role_override(text, w)) add(Marker::role_override);
                }
                i = w.end - 1;
            } else {
                std::size_t end = i + 1;
                for (;;) {
                    end += lower_prefix(text.data() + end, n - end);
                    if (end >= n || !(is_alpha(byte(end)) || text[end] == '\'')) break;
                    ++end;
                }
                i = end - 1;
            }
            continue;
        }
        // Only these bytes can start a marker; everything else is passed over.
        switch (c) {
            case '<':
            case '[': {
                if (const std::size_t length = chat_template(text, i)) {
                    add(Marker::chat_template);
                    i += length - 1;
                } else if (c == '<') {
                    if (const std::size_t tag = role_tag(text, i)) {
                        add(Marker::role_tag);
                        i += tag - 1;
                    }
                }
                break;
            }
            case 0xF3:
                // U+E0000-U+E007F: F3 A0 80 80 - F3 A0 81 BF. A run of them counts once.
                if (i + 3 < n && byte(i + 1) == 0xA0 && (byte(i + 2) == 0x80 || byte(i + 2) == 0x81)) {
                    if (!in_hidden_run) add(Marker::hidden_tags);
                    in_hidden_run = true;
                    i += 3;
                    continue;
                }
                break;
            case 0xE2:
                if (i + 2 < n && (byte(i + 1) == 0x80 || byte(i + 1) == 0x81)) {
                    const unsigned char b1 = byte(i + 1), b2 = byte(i + 2);
                    if (b1 == 0x80 && b2 >= 0xAA && b2 <= 0xAE) add(Marker::bidi_override);
                    else if (b1 == 0x81 && b2 >= 0xA6 && b2 <= 0xA9) add(Marker::bidi_override);
                    else if ((b1 == 0x80 && b2 == 0x8B) || (b1 == 0x81 && b2 >= 0xA0 && b2 <= 0xA4))
                        add(Marker::invisible_characters);
                    else if (b1 == 0x80 && (b2 == 0x8C || b2 == 0x8D)) {
                        // Joiners are how emoji and some scripts are written; between ASCII
                        // letters they only hide something.
                        if (i > 0 && byte(i - 1) < 0x80 && i + 3 < n && byte(i + 3) < 0x80)
                            add(Marker::invisible_characters);
                    }
                    i += 2;
                }
                break;
            case 0xEF:
                if (i > 0 && i + 2 < n && byte(i + 1) == 0xBB && byte(i + 2) == 0xBF) {
                    add(Marker::invisible_characters);
                    i += 2;
                }
                break;
            default: break;
        }
        in_hidden_run = false;
    }
}

}  // namespace toolport::util::redaction
