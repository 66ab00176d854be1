/// One file of the sessions folder as the library knows it.
package struct LibraryEntry: Equatable, Sendable {
    /// What the file turned out to be.
    package enum Kind: Equatable, Sendable {
        /// A recording, summarised; `warning` is the torn end a crash left (said at each listing).
        case session(RecordingSummary, warning: String?)
        /// A recording of a format this hrm does not know (a newer hrm's): listed with a note,
        /// never read as format 1. `start` from its header, when it reads.
        case newerFormat(Int, start: Int64?)
        /// Not a recording, or damaged: the message names the file and says why.
        case unreadable(String)
        /// Not opened at all (not a regular file, no permission): looked at again at each listing,
        /// since what fixes it (chmod) does not change the file's size or time.
        case unopenable(String)
    }

    /// The file's name in the folder.
    package let name: String
    package let kind: Kind

    /// Every stored property, as given.
    package init(name: String, kind: Kind) {
        self.name = name
        self.kind = kind
    }

    /// The start, for filters: nil when the file gives none.
    package var start: Int64? {
        switch kind {
        case .session(let summary, _): summary.start
        case .newerFormat(_, let start): start
        case .unreadable, .unopenable: nil
        }
    }
}
