import SQLite

/// The index's tables, and what its `user_version` says of them.
///
/// The recordings are the truth; the index only saves reading them. So a schema that changes
/// is never migrated: an index of another version is dropped and made again from the files.
enum LibrarySchema {
    /// `PRAGMA user_version` of an index made by this hrm. 0 is a database hrm never set up.
    static let version: Int64 = 2

    /// One row per file of the sessions folder, one per strap of a recording, one per strap and
    /// zone, one per scored morning reading (`readings`, from a recording's `readiness` line:
    /// version 2); `days` sums them per UTC day and strap, for trends.
    static let create = """
        CREATE TABLE files (
            name TEXT PRIMARY KEY NOT NULL,
            size INTEGER NOT NULL,
            mtime_ns INTEGER NOT NULL,
            ctime_ns INTEGER NOT NULL,
            inode INTEGER NOT NULL,
            status TEXT NOT NULL CHECK (status IN ('session', 'newer_format', 'unreadable', 'unopenable')),
            note TEXT,
            format INTEGER,
            start_ms INTEGER,
            end_ms INTEGER,
            duration_s REAL,
            connected_s REAL,
            device TEXT,
            device_name TEXT,
            measurements INTEGER,
            avg_bpm INTEGER,
            max_bpm INTEGER
        );
        CREATE INDEX files_start ON files (start_ms);
        CREATE TABLE straps (
            file TEXT NOT NULL,
            position INTEGER NOT NULL,
            address TEXT NOT NULL,
            name TEXT,
            measurements INTEGER NOT NULL,
            min_bpm INTEGER,
            avg_bpm INTEGER,
            max_bpm INTEGER,
            connected_s REAL NOT NULL,
            beats INTEGER,
            artefacts INTEGER,
            mean_nn_ms REAL,
            rmssd_ms REAL,
            sdnn_ms REAL,
            alpha1 REAL,
            resting_bpm REAL,
            PRIMARY KEY (file, position)
        );
        CREATE TABLE zones (
            file TEXT NOT NULL,
            position INTEGER NOT NULL,
            zone INTEGER NOT NULL,
            seconds INTEGER NOT NULL,
            PRIMARY KEY (file, position, zone)
        );
        CREATE TABLE readings (
            file TEXT PRIMARY KEY NOT NULL,
            start_ms INTEGER NOT NULL,
            ln_rmssd REAL NOT NULL,
            rmssd_ms REAL NOT NULL,
            resting_hr REAL NOT NULL,
            beats INTEGER NOT NULL,
            corrected_beats INTEGER NOT NULL,
            seconds REAL NOT NULL
        );
        CREATE INDEX readings_start ON readings (start_ms);
        CREATE VIEW days AS
            SELECT date(f.start_ms / 1000, 'unixepoch') AS day, s.address AS address,
                count(*) AS sessions, sum(f.duration_s) AS duration_s, sum(s.connected_s) AS connected_s,
                min(s.resting_bpm) AS resting_bpm, avg(s.rmssd_ms) AS rmssd_ms, avg(s.sdnn_ms) AS sdnn_ms,
                avg(s.alpha1) AS alpha1, sum(s.beats) AS beats, sum(s.artefacts) AS artefacts,
                min(s.min_bpm) AS min_bpm, max(s.max_bpm) AS max_bpm
            FROM files f JOIN straps s ON s.file = f.name
            WHERE f.status = 'session'
            GROUP BY day, s.address;
        """

    /// What an index's version says.
    enum State: Equatable {
        /// Nothing in it yet.
        case empty
        case current
        /// Made by an older hrm (or damaged into version 0): to make again.
        case older(Int64)
        /// Made by a newer hrm: left as it is.
        case newer(Int64)
    }

    static func state(of database: Database) throws(SQLiteError) -> State {
        let version = try database.pragmaInteger("user_version")
        if version == Self.version { return .current }
        if version > Self.version { return .newer(version) }
        let objects = try database.prepare("SELECT count(*) FROM sqlite_master")
        let count = try objects.step() ? objects.int64(0) ?? 0 : 0
        return version == 0 && count == 0 ? .empty : .older(version)
    }

    /// Drops whatever the database holds and makes this version's tables, in one transaction
    /// (nothing when, under the lock, they are this version's already).
    static func make(_ database: Database) throws(SQLiteError) {
        try database.transaction { () throws(SQLiteError) in
            // Another hrm may have made it between our look and our lock: theirs is as good.
            if try database.pragmaInteger("user_version") == version { return }
            let listed = try database.prepare(
                "SELECT type, name FROM sqlite_master WHERE type IN ('table', 'view') AND name NOT LIKE 'sqlite_%'"
            )
            var drops: [String] = []
            while try listed.step() {
                guard let type = listed.text(0), let name = listed.text(1) else { continue }
                drops.append(
                    "DROP \(type == "view" ? "VIEW" : "TABLE") IF EXISTS \"\(name.replacing("\"", with: "\"\""))\";"
                )
            }
            for drop in drops { try database.execute(drop) }
            try database.execute(create)
            try database.execute("PRAGMA user_version = \(version)")
        }
    }
}
