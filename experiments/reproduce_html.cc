// aware reproduce: REPORT.md as one self-contained HTML page. A converter for
// the Markdown subset the report writes (headings, pipe tables, "- " lists,
// paragraphs, image lines, `code`, **bold**, *emphasis*), PNGs inlined.
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "experiments/reproduce.h"

namespace aware::reproduce {
namespace {

namespace fs = std::filesystem;

std::string base64(const std::string& in) {
  static const char* table = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  size_t i = 0;
  for (; i + 2 < in.size(); i += 3) {
    const unsigned v = (static_cast<unsigned char>(in[i]) << 16) | (static_cast<unsigned char>(in[i + 1]) << 8) |
                       static_cast<unsigned char>(in[i + 2]);
    out += {table[v >> 18], table[(v >> 12) & 63], table[(v >> 6) & 63], table[v & 63]};
  }
  if (i + 1 == in.size()) {
    const unsigned v = static_cast<unsigned char>(in[i]) << 16;
    out += {table[v >> 18], table[(v >> 12) & 63], '=', '='};
  } else if (i + 2 == in.size()) {
    const unsigned v = (static_cast<unsigned char>(in[i]) << 16) | (static_cast<unsigned char>(in[i + 1]) << 8);
    out += {table[v >> 18], table[(v >> 12) & 63], table[(v >> 6) & 63], '='};
  }
  return out;
}

std::string escape_html(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '&') out += "&amp;";
    else if (c == '<') out += "&lt;";
    else if (c == '>') out += "&gt;";
    else if (c == '"') out += "&quot;";
    else out += c;
  }
  return out;
}

// `code`, **bold** and *emphasis* of one line of this tool's Markdown.
std::string inline_html(const std::string& text) {
  std::string out;
  bool code = false, bold = false, em = false;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '`') {
      out += code ? "</code>" : "<code>";
      code = !code;
    } else if (!code && c == '*' && i + 1 < text.size() && text[i + 1] == '*') {
      out += bold ? "</b>" : "<b>";
      bold = !bold;
      ++i;
    } else if (!code && c == '*' && (em || (i + 1 < text.size() && text[i + 1] != ' '))) {
      out += em ? "</em>" : "<em>";
      em = !em;
    } else {
      out += escape_html(std::string(1, c));
    }
  }
  if (code) out += "</code>";
  if (bold) out += "</b>";
  if (em) out += "</em>";
  return out;
}

std::vector<std::string> table_cells(const std::string& line) {
  std::vector<std::string> out;
  std::string body = line;
  if (!body.empty() && body.front() == '|') body.erase(0, 1);
  if (!body.empty() && body.back() == '|') body.pop_back();
  std::string cell;
  std::istringstream in(body);
  while (std::getline(in, cell, '|')) {
    const size_t a = cell.find_first_not_of(' '), z = cell.find_last_not_of(' ');
    out.push_back(a == std::string::npos ? "" : cell.substr(a, z - a + 1));
  }
  return out;
}


}  // namespace

std::string markdown_to_html(const std::string& markdown, const fs::path& dir, const std::string& title) {
  std::ostringstream out;
  out << "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>" << escape_html(title)
      << "</title>\n<style>body{font-family:sans-serif;max-width:1200px;margin:2em auto;padding:0 1em;"
         "line-height:1.45}table{border-collapse:collapse;margin:1em 0;font-size:0.9em}td,th{border:1px solid "
         "#ccc;padding:3px 7px}th{background:#f0f0f0}td{text-align:right}td:first-child,td:nth-child(2)"
         "{text-align:left}img{max-width:100%;border:1px solid #ddd}code{background:#f4f4f4;padding:0 3px}"
         "</style></head><body>\n";
  std::istringstream in(markdown);
  std::string line;
  std::vector<std::string> paragraph, table, list;
  auto flush = [&] {
    if (!paragraph.empty()) {
      out << "<p>";
      for (size_t i = 0; i < paragraph.size(); ++i) out << (i ? " " : "") << inline_html(paragraph[i]);
      out << "</p>\n";
      paragraph.clear();
    }
    if (!list.empty()) {
      out << "<ul>\n";
      for (const std::string& item : list) out << "<li>" << inline_html(item) << "</li>\n";
      out << "</ul>\n";
      list.clear();
    }
    if (!table.empty()) {
      out << "<table>\n";
      for (size_t i = 0; i < table.size(); ++i) {
        if (i == 1 && table[i].find("---") != std::string::npos) continue;
        const char* tag = i == 0 ? "th" : "td";
        out << "<tr>";
        for (const std::string& c : table_cells(table[i])) out << "<" << tag << ">" << inline_html(c) << "</" << tag << ">";
        out << "</tr>\n";
      }
      out << "</table>\n";
      table.clear();
    }
  };
  while (std::getline(in, line)) {
    if (line.empty()) {
      flush();
    } else if (line.rfind("|", 0) == 0) {
      if (table.empty()) flush();
      table.push_back(line);
    } else if (line.rfind("#", 0) == 0) {
      flush();
      const size_t level = line.find_first_not_of('#');
      const std::string text = level == std::string::npos ? "" : line.substr(level);
      const size_t start = text.find_first_not_of(' ');
      out << "<h" << level << ">" << inline_html(start == std::string::npos ? "" : text.substr(start)) << "</h"
          << level << ">\n";
    } else if (line.rfind("![", 0) == 0 && line.find("](") != std::string::npos && line.back() == ')') {
      flush();
      const size_t mid = line.find("](");
      const std::string alt = line.substr(2, mid - 2), path = line.substr(mid + 2, line.size() - mid - 3);
      std::ifstream image(dir / path, std::ios::binary);
      const std::string bytes((std::istreambuf_iterator<char>(image)), std::istreambuf_iterator<char>());
      out << "<p><img alt=\"" << escape_html(alt) << "\" src=\"data:image/png;base64," << base64(bytes)
          << "\"></p>\n";
    } else if (line.rfind("- ", 0) == 0) {
      if (!paragraph.empty() || !table.empty()) flush();
      list.push_back(line.substr(2));
    } else {
      if (!table.empty() || !list.empty()) flush();
      paragraph.push_back(line);
    }
  }
  flush();
  out << "</body></html>\n";
  return out.str();
}


}  // namespace aware::reproduce
