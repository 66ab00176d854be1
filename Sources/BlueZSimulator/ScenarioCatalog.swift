import Foundation
import InputFiles

/// Finds scenarios by name (`basic`) or path (`./mine.json`), and lists the shipped ones.
///
/// Shipped scenarios live in `Scenarios/` in the source tree and in `share/hrm/scenarios` once
/// installed; `ScenarioFolders` says where they are looked for.
public enum ScenarioCatalog {
    public struct LoadError: Error, CustomStringConvertible {
        /// What went wrong, for hrm-sim's exit status.
        public enum Kind: Sendable {
            /// No scenario by that name, or the file cannot be read (exit 66).
            case notFound
            /// The file is there but is not a valid scenario (exit 65).
            case invalid
        }

        public let kind: Kind
        public let description: String
    }

    /// Shipped scenario names, sorted: the `.json` files of the first scenario folder found.
    public static func names(in folders: ScenarioFolders = .current()) -> [String] {
        guard let directory = folders.existing.first,
            let files = try? FileManager.default.contentsOfDirectory(atPath: directory)
        else { return [] }
        return files.filter { $0.hasSuffix(".json") }.map { String($0.dropLast(5)) }.sorted()
    }

    /// Loads and validates a scenario given by name or path.
    public static func load(_ nameOrPath: String, folders: ScenarioFolders = .current()) throws -> Scenario {
        let url: URL
        if nameOrPath.contains("/") || nameOrPath.hasSuffix(".json") {
            url = URL(fileURLWithPath: nameOrPath)
        } else if let found = folders.existing.map({
            URL(fileURLWithPath: $0).appendingPathComponent("\(nameOrPath).json")
        })
        .first(where: { FileManager.default.fileExists(atPath: $0.path) }) {
            url = found
        } else {
            let known = names(in: folders)
            throw LoadError(
                kind: .notFound,
                description: "no scenario named '\(nameOrPath)'"
                    + (known.isEmpty
                        ? " (no scenario folder found; looked in \(folders.candidates.joined(separator: ", ")); "
                            + "set HRM_SIM_SCENARIOS)"
                        : "; shipped: \(known.joined(separator: ", "))"))
        }
        let data: Data
        do {
            // A regular file only: a FIFO given as --scenario would hang the read for ever.
            let descriptor = try RegularFile.open(url.path, source: url.path)
            data = try FileHandle(fileDescriptor: descriptor, closeOnDealloc: true).readToEnd() ?? Data()
        } catch let error as InputError {
            throw LoadError(kind: .notFound, description: error.description)
        } catch {
            throw LoadError(
                kind: .notFound, description: "cannot read \(url.path): \(error.localizedDescription)")
        }
        let scenario: Scenario
        do {
            scenario = try JSONDecoder().decode(Scenario.self, from: data)
        } catch let error as DecodingError {
            throw LoadError(kind: .invalid, description: "\(url.path): \(describe(error))")
        }
        do {
            try scenario.validate()
        } catch {
            throw LoadError(kind: .invalid, description: "\(url.path): \(error)")
        }
        return scenario
    }

    /// A DecodingError as one line with the JSON path: `devices[0].address: expected a string`.
    static func describe(_ error: DecodingError) -> String {
        func path(_ keys: [any CodingKey]) -> String {
            var text = ""
            for key in keys {
                if let index = key.intValue {
                    text += "[\(index)]"
                } else {
                    text += (text.isEmpty ? "" : ".") + key.stringValue
                }
            }
            return text.isEmpty ? "(top level)" : text
        }
        switch error {
        case .typeMismatch(let type, let context):
            return "\(path(context.codingPath)): expected \(type)"
        case .valueNotFound(let type, let context):
            return "\(path(context.codingPath)): expected \(type), found null"
        case .keyNotFound(let key, let context):
            return "\(path(context.codingPath + [key])): required"
        case .dataCorrupted(let context):
            return "\(path(context.codingPath)): \(context.debugDescription)"
        @unknown default:
            return "\(error)"
        }
    }
}
