import Monitor
import Outputs
import SessionLibrary

/// `hrm wach`: a first word that is no subcommand gets the nearest one named (`did you mean
/// 'watch'?`) instead of ArgumentParser's bare "Unexpected argument".
enum CommandSuggestion {
    /// The message for `word`, or nil when it is a subcommand (or an option: ArgumentParser
    /// handles those).
    static func unknown(_ word: String, among names: [String]) -> String? {
        guard !word.hasPrefix("-"), !names.contains(word), word != "help" else { return nil }
        let shown = TerminalText.sanitised(word, limit: TerminalText.nameLimit)
        let nearest = names.map { ($0, distance(word.lowercased(), $0)) }.min { $0.1 < $1.1 }
        var message = "hrm: '\(shown)' is not a command"
        if let (name, distance) = nearest,
            distance <= (name.count >= 5 ? 2 : 1) || name.hasPrefix(word.lowercased())
        {
            message += "; did you mean '\(name)'?"
        }
        return message + "\n  hint: hrm --help lists the commands: " + names.joined(separator: ", ")
    }

    /// Edits (insert, delete, replace, swap two neighbours) from `a` to `b`.
    static func distance(_ a: String, _ b: String) -> Int {
        let a = Array(a)
        let b = Array(b)
        guard !a.isEmpty else { return b.count }
        guard !b.isEmpty else { return a.count }
        var table = Array(repeating: Array(repeating: 0, count: b.count + 1), count: a.count + 1)
        for i in 0...a.count { table[i][0] = i }
        for j in 0...b.count { table[0][j] = j }
        for i in 1...a.count {
            for j in 1...b.count {
                let cost = a[i - 1] == b[j - 1] ? 0 : 1
                table[i][j] = min(table[i - 1][j] + 1, table[i][j - 1] + 1, table[i - 1][j - 1] + cost)
                if i > 1, j > 1, a[i - 1] == b[j - 2], a[i - 2] == b[j - 1] {
                    table[i][j] = min(table[i][j], table[i - 2][j - 2] + 1)
                }
            }
        }
        return table[a.count][b.count]
    }
}
