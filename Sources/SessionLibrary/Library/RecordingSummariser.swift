import InputFiles

/// One file of the sessions folder read and summarised, by the readers `hrm export` uses: what
/// the index keeps of it, or why it is not a recording.
package enum RecordingSummariser {
    /// The entry for `path`; `shown` names the file in messages (sanitised by the caller).
    package static func entry(name: String, path: String, shown: String) -> LibraryEntry {
        LibraryEntry(name: name, kind: kind(path: path, shown: shown))
    }

    static func kind(path: String, shown: String) -> LibraryEntry.Kind {
        let input: TextInput
        do {
            input = try TextInput.file(path, source: shown)
        } catch {
            // The message names the file: "cannot read x.jsonl: not a regular file (a FIFO)".
            return error.isUnreadable ? .unopenable(error.description) : .unreadable(error.description)
        }
        do {
            let session = try RecordedSession(text: input.text, source: shown, keepingLines: false)
            return .session(
                RecordingSummary(session, text: input.text, source: shown), warning: input.tornTailWarning)
        } catch {
            if let newer = error.newerFormat { return .newerFormat(newer.format, start: newer.start) }
            return .unreadable(error.description)
        }
    }
}
