import HRV
package import SQLite

/// The session library's index (`$XDG_DATA_HOME/hrm/library.sqlite3`): what each recording of
/// the sessions folder holds, kept beside the files so that listing them reads none.
///
/// Each file's row carries its stamp (`FileStamp`): a file whose stamp changed is read again, a
/// file gone loses its rows. Every change is one transaction, so a failure (a full disk) leaves
/// the index as it was. WAL mode: a listing reads while `hrm record` writes, and two writers wait
/// for each other through the busy timeout.
package final class SessionIndex {
    private let database: Database

    /// The index at `path`, made (or made again) when it is missing or of another version; with
    /// `making` false, only an index of this version that exists is opened (`.notMade` otherwise).
    /// `state` says what was found. Throws `.newerSchema` for an index of a newer hrm (left as it
    /// is), SQLite's errors for the rest (a damaged file is `.corrupt`).
    package init(path: String, making: Bool = true) throws(LibraryFailure) {
        do {
            database = try Database(path: path, mode: making ? .create : .readWrite)
            let state = try LibrarySchema.state(of: database)
            switch state {
            case .current:
                found = .current
            case .empty:
                guard making else { throw LibraryFailure.notMade }
                found = .made
            case .older(let version):
                guard making else { throw LibraryFailure.notMade }
                found = .older(version)
            case .newer(let version):
                throw LibraryFailure.newerSchema(version)
            }
            if found != .current {
                // WAL is a property of the file: set once, when the tables are made.
                try database.execute("PRAGMA journal_mode = WAL")
                try LibrarySchema.make(database)
            }
            // Each transaction reaches the WAL at commit; a power cut may lose the last one,
            // which the next listing notices by the stamps.
            try database.execute("PRAGMA synchronous = NORMAL")
        } catch let error as LibraryFailure {
            throw error
        } catch let error as SQLiteError {
            throw LibraryFailure.sqlite(error)
        } catch {
            throw LibraryFailure.sqlite(SQLiteError(code: 1, message: "\(error)"))
        }
    }

    /// What `init` found.
    package enum Found: Equatable, Sendable {
        case current
        /// There was no index: it was made.
        case made
        /// An older hrm's index (its version): made again.
        case older(Int64)
    }

    /// What `init` found.
    package private(set) var found: Found = .current

    /// The stamps of every file the index has a row for, and whether it is to be looked at again
    /// whatever its stamp (`unopenable`).
    package func stamps() throws(LibraryFailure) -> [String: (stamp: FileStamp, retry: Bool)] {
        try wrapping { () throws(SQLiteError) in
            let query = try database.prepare(
                "SELECT name, size, mtime_ns, ctime_ns, inode, status FROM files")
            var stamps: [String: (FileStamp, Bool)] = [:]
            while try query.step() {
                guard let name = query.text(0) else { continue }
                let stamp = FileStamp(
                    size: query.int64(1) ?? -1, modified: query.int64(2) ?? 0, changed: query.int64(3) ?? 0,
                    inode: query.int64(4) ?? 0, regular: true)
                stamps[name] = (stamp, query.text(5) == "unopenable")
            }
            return stamps
        }
    }

    /// Replaces the rows of `entries` (each with the stamp it was read at) and removes those of
    /// `removed`, in one transaction: all of it, or nothing.
    package func apply(_ entries: [(entry: LibraryEntry, stamp: FileStamp)], removing removed: [String])
        throws(LibraryFailure)
    {
        guard !entries.isEmpty || !removed.isEmpty else { return }
        try wrapping { () throws(SQLiteError) in
            try database.transaction { () throws(SQLiteError) in
                let deleteFile = try database.prepare("DELETE FROM files WHERE name = ?1")
                let deleteStraps = try database.prepare("DELETE FROM straps WHERE file = ?1")
                let deleteZones = try database.prepare("DELETE FROM zones WHERE file = ?1")
                let deleteReading = try database.prepare("DELETE FROM readings WHERE file = ?1")
                for name in removed + entries.map(\.entry.name) {
                    for statement in [deleteFile, deleteStraps, deleteZones, deleteReading] {
                        try statement.run([.text(name)])
                    }
                }
                let insertFile = try database.prepare(
                    """
                    INSERT INTO files (name, size, mtime_ns, ctime_ns, inode, status, note, format, start_ms, end_ms,
                        duration_s, connected_s, device, device_name, measurements, avg_bpm, max_bpm)
                    VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17)
                    """)
                let insertStrap = try database.prepare(
                    """
                    INSERT INTO straps (file, position, address, name, measurements, min_bpm, avg_bpm, max_bpm,
                        connected_s, beats, artefacts, mean_nn_ms, rmssd_ms, sdnn_ms, alpha1, resting_bpm)
                    VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16)
                    """)
                let insertZone = try database.prepare(
                    "INSERT INTO zones (file, position, zone, seconds) VALUES (?1, ?2, ?3, ?4)")
                let insertReading = try database.prepare(
                    """
                    INSERT INTO readings (file, start_ms, ln_rmssd, rmssd_ms, resting_hr, beats, corrected_beats,
                        seconds)
                    VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)
                    """)
                for (entry, stamp) in entries {
                    var row: [SQLValue] = [
                        .text(entry.name), .integer(stamp.size), .integer(stamp.modified),
                        .integer(stamp.changed),
                        .integer(stamp.inode),
                    ]
                    switch entry.kind {
                    case .session(let summary, let warning):
                        row += [
                            .text("session"), .optional(warning), .integer(1), .integer(summary.start),
                            .integer(summary.end), .real(summary.durationSeconds),
                            .real(summary.connectedSeconds),
                            .optional(summary.device), .optional(summary.name),
                            .integer(Int64(summary.measurements)),
                            .optional(summary.averageBPM), .optional(summary.maximumBPM),
                        ]
                    case .newerFormat(let format, let start):
                        row += [.text("newer_format"), .null, .integer(Int64(format)), .optional(start)]
                        row += Array(repeating: .null, count: 8)
                    case .unreadable(let message), .unopenable(let message):
                        let status = if case .unopenable = entry.kind { "unopenable" } else { "unreadable" }
                        row += [.text(status), .text(message)] + Array(repeating: .null, count: 10)
                    }
                    try insertFile.run(row)
                    guard case .session(let summary, _) = entry.kind else { continue }
                    if let reading = summary.readiness {
                        try insertReading.run([
                            .text(entry.name), .integer(summary.start), .real(reading.lnRMSSD),
                            .real(reading.rmssd),
                            .real(reading.restingHR), .integer(Int64(reading.beats)),
                            .integer(Int64(reading.correctedBeats)), .real(reading.seconds),
                        ])
                    }
                    for (position, strap) in summary.straps.enumerated() {
                        let hrv = strap.hrv
                        try insertStrap.run([
                            .text(entry.name), .integer(Int64(position)), .text(strap.address),
                            .optional(strap.name),
                            .integer(Int64(strap.measurements)), .optional(strap.minimumBPM),
                            .optional(strap.averageBPM), .optional(strap.maximumBPM),
                            .real(strap.connectedSeconds),
                            .optional(hrv?.beats), .optional(hrv?.artefacts), .optional(hrv?.meanNN),
                            .optional(hrv?.rmssd), .optional(hrv?.sdnn), .optional(hrv?.alpha1),
                            .optional(strap.restingBPM),
                        ])
                        for (zone, seconds) in strap.zoneSeconds.sorted(by: { $0.key < $1.key }) {
                            try insertZone.run([
                                .text(entry.name), .integer(Int64(position)), .integer(Int64(zone)),
                                .integer(Int64(seconds)),
                            ])
                        }
                    }
                }
            }
        }
    }

    /// Every file's entry, by name, newest first (a recording's name starts with its start).
    package func entries() throws(LibraryFailure) -> [LibraryEntry] {
        try wrapping { () throws(SQLiteError) in
            var straps: [String: [RecordingSummary.StrapFigures]] = [:]
            let strapQuery = try database.prepare(
                """
                SELECT file, address, name, measurements, min_bpm, avg_bpm, max_bpm, connected_s, beats, artefacts,
                    mean_nn_ms, rmssd_ms, sdnn_ms, alpha1, resting_bpm, position
                FROM straps ORDER BY file, position
                """)
            var zones: [String: [Int: [Int: Int]]] = [:]
            let zoneQuery = try database.prepare("SELECT file, position, zone, seconds FROM zones")
            while try zoneQuery.step() {
                guard let file = zoneQuery.text(0), let position = zoneQuery.int64(1),
                    let zone = zoneQuery.int64(2)
                else { continue }
                zones[file, default: [:]][Int(position), default: [:]][Int(zone)] = Int(
                    zoneQuery.int64(3) ?? 0)
            }
            while try strapQuery.step() {
                guard let file = strapQuery.text(0), let address = strapQuery.text(1) else { continue }
                let hrv = strapQuery.int64(8).map { beats in
                    HRVMetrics(
                        beats: Int(beats), artefacts: Int(strapQuery.int64(9) ?? 0),
                        meanNN: strapQuery.double(10),
                        sdnn: strapQuery.double(12), rmssd: strapQuery.double(11),
                        alpha1: strapQuery.double(13))
                }
                let position = Int(strapQuery.int64(15) ?? 0)
                straps[file, default: []].append(
                    RecordingSummary.StrapFigures(
                        address: address, name: strapQuery.text(2),
                        measurements: Int(strapQuery.int64(3) ?? 0),
                        minimumBPM: strapQuery.int64(4).map(Int.init),
                        averageBPM: strapQuery.int64(5).map(Int.init),
                        maximumBPM: strapQuery.int64(6).map(Int.init),
                        connectedSeconds: strapQuery.double(7) ?? 0,
                        hrv: hrv, restingBPM: strapQuery.double(14),
                        zoneSeconds: zones[file]?[position] ?? [:]))
            }
            var readings: [String: ReadinessFigures] = [:]
            let readingQuery = try database.prepare(
                "SELECT file, ln_rmssd, rmssd_ms, resting_hr, beats, corrected_beats, seconds FROM readings")
            while try readingQuery.step() {
                guard let file = readingQuery.text(0), let ln = readingQuery.double(1),
                    let rmssd = readingQuery.double(2), let resting = readingQuery.double(3)
                else { continue }
                readings[file] = ReadinessFigures(
                    lnRMSSD: ln, rmssd: rmssd, restingHR: resting, beats: Int(readingQuery.int64(4) ?? 0),
                    correctedBeats: Int(readingQuery.int64(5) ?? 0), seconds: readingQuery.double(6) ?? 0)
            }
            let query = try database.prepare(
                """
                SELECT name, status, note, format, start_ms, end_ms, connected_s, device, device_name, measurements,
                    avg_bpm, max_bpm
                FROM files ORDER BY name DESC
                """)
            var entries: [LibraryEntry] = []
            while try query.step() {
                guard let name = query.text(0), let status = query.text(1) else { continue }
                let kind: LibraryEntry.Kind
                switch status {
                case "session":
                    let own = straps[name] ?? []
                    kind = .session(
                        RecordingSummary(
                            start: query.int64(4) ?? 0, end: query.int64(5) ?? 0,
                            connectedSeconds: query.double(6) ?? 0,
                            device: query.text(7), name: query.text(8), devices: own.map(\.address),
                            measurements: Int(query.int64(9) ?? 0), averageBPM: query.int64(10).map(Int.init),
                            maximumBPM: query.int64(11).map(Int.init), straps: own, readiness: readings[name]),
                        warning: query.text(2))
                case "newer_format": kind = .newerFormat(Int(query.int64(3) ?? 0), start: query.int64(4))
                case "unopenable": kind = .unopenable(query.text(2) ?? name)
                default: kind = .unreadable(query.text(2) ?? name)
                }
                entries.append(LibraryEntry(name: name, kind: kind))
            }
            return entries
        }
    }

    private func wrapping<T>(_ body: () throws(SQLiteError) -> T) throws(LibraryFailure) -> T {
        do throws(SQLiteError) { return try body() } catch { throw .sqlite(error) }
    }
}

/// Why the index could not be used: the listing then reads the files themselves.
package enum LibraryFailure: Error, Equatable, Sendable, CustomStringConvertible {
    /// SQLite failed (its kind says how: `.corrupt`, `.busy`, `.full`, `.readOnly`, ...).
    case sqlite(SQLiteError)
    /// The index was made by a newer hrm (its schema version): left as it is.
    case newerSchema(Int64)
    /// Opened read only and there is no index of this version to read.
    case notMade

    package var description: String {
        switch self {
        case .sqlite(let error): error.description
        case .newerSchema(let version): "made by a newer hrm (schema \(version))"
        case .notMade: "there is no index of this hrm's version"
        }
    }
}

extension SQLValue {
    fileprivate static func optional(_ text: String?) -> SQLValue { text.map { .text($0) } ?? .null }
    fileprivate static func optional(_ number: Int?) -> SQLValue {
        number.map { .integer(Int64($0)) } ?? .null
    }
    fileprivate static func optional(_ number: Int64?) -> SQLValue { number.map { .integer($0) } ?? .null }
    fileprivate static func optional(_ number: Double?) -> SQLValue { number.map { .real($0) } ?? .null }
}
