#include "client/shell_words.hpp"

#include <fmt/format.h>

namespace toolport::client {

namespace {

bool is_blank(char c) { return c == ' ' || c == '\t' || c == '\n'; }

[[noreturn]] void refuse(char c, std::size_t at) {
    const char* what = c == '$' || c == '`'   ? "variables and command substitution"
                       : c == '#'             ? "comments"
                       : c == '<' || c == '>' ? "redirection"
                                              : "pipes, lists and subshells";
    throw std::invalid_argument(
        fmt::format("unquoted '{}' at position {}: the command is not run by a shell, so {} are not supported "
                    "(quote it to pass it literally)",
                    c, at + 1, what));
}

}  // namespace

std::vector<std::string> split_shell_words(std::string_view text) {
    std::vector<std::string> words;
    std::string word;
    bool in_word = false;  // also true for a word that is so far only '' (an empty argument)
    std::size_t i = 0;
    while (i < text.size()) {
        const char c = text[i];
        if (is_blank(c)) {
            if (in_word) words.push_back(std::move(word));
            word.clear();
            in_word = false;
            ++i;
        } else if (c == '\'') {
            auto close = text.find('\'', i + 1);
            if (close == std::string_view::npos) {
                throw std::invalid_argument(fmt::format("unterminated single quote at position {}", i + 1));
            }
            word.append(text.substr(i + 1, close - i - 1));
            in_word = true;
            i = close + 1;
        } else if (c == '"') {
            const std::size_t open = i++;
            for (;;) {
                if (i >= text.size()) {
                    throw std::invalid_argument(fmt::format("unterminated double quote at position {}", open + 1));
                }
                const char d = text[i];
                if (d == '"') {
                    ++i;
                    break;
                }
                if (d == '\\' && i + 1 < text.size()) {
                    const char next = text[i + 1];
                    if (next == '\n') {
                        i += 2;  // line continuation
                        continue;
                    }
                    if (next == '"' || next == '\\' || next == '$' || next == '`') {
                        word += next;
                        i += 2;
                        continue;
                    }
                } else if (d == '$' || d == '`') {
                    // A shell expands these inside double quotes too.
                    refuse(d, i);
                }
                word += d;
                ++i;
            }
            in_word = true;
        } else if (c == '\\') {
            if (i + 1 >= text.size()) {
                throw std::invalid_argument(fmt::format("backslash at the end (position {}) escapes nothing", i + 1));
            }
            if (text[i + 1] != '\n') {
                word += text[i + 1];
                in_word = true;
            }
            i += 2;
        } else if (c == '$' || c == '`' || c == '|' || c == '&' || c == ';' || c == '<' || c == '>' || c == '(' ||
                   c == ')' || (c == '#' && !in_word)) {
            refuse(c, i);
        } else {
            word += c;
            in_word = true;
            ++i;
        }
    }
    if (in_word) words.push_back(std::move(word));
    if (words.empty()) throw std::invalid_argument("the command is empty");
    return words;
}

}  // namespace toolport::client
