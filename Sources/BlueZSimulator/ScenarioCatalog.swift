import Foundation

/// Finds scenarios by name (`basic`) or path (`./mine.json`), and lists the shipped ones.
///
/// Shipped scenarios live in `Scenarios/` in the source tree and in `share/hrm/scenarios` once
/// installed. Looked for, in order: `$HRM_SIM_SCENARIOS`, `<bin>/../share/hrm/scenarios`, a
/// `Scenarios` folder beside the binary or above it (a build inside the checkout), `./Scenarios`.
public enum ScenarioCatalog {
    public struct LoadError: Error, CustomStringConvertible {
        public let description: String
    }

    static func directories(executable: String = CommandLine.arguments.first ?? "") -> [URL] {
        var result: [URL] = []
        if let path = ProcessInfo.processInfo.environment["HRM_SIM_SCENARIOS"], !path.isEmpty {
            result.append(URL(fileURLWithPath: path))
        }
        let binary = URL(fileURLWithPath: executable).resolvingSymlinksInPath().deletingLastPathComponent()
        result.append(binary.deletingLastPathComponent().appendingPathComponent("share/hrm/scenarios"))
        var directory = binary
        while directory.path != "/" && !directory.path.isEmpty {
            result.append(directory.appendingPathComponent("Scenarios"))
            directory.deleteLastPathComponent()
        }
        result.append(
            URL(fileURLWithPath: FileManager.default.currentDirectoryPath).appendingPathComponent("Scenarios")
        )
        return result.filter { FileManager.default.fileExists(atPath: $0.path) }
    }

    /// Shipped scenario names, sorted.
    public static func names() -> [String] {
        guard let directory = directories().first,
            let files = try? FileManager.default.contentsOfDirectory(atPath: directory.path)
        else { return [] }
        return files.filter { $0.hasSuffix(".json") }.map { String($0.dropLast(5)) }.sorted()
    }

    /// Loads and validates a scenario given by name or path.
    public static func load(_ nameOrPath: String) throws -> Scenario {
        let url: URL
        if nameOrPath.contains("/") || nameOrPath.hasSuffix(".json") {
            url = URL(fileURLWithPath: nameOrPath)
        } else if let found = directories().map({ $0.appendingPathComponent("\(nameOrPath).json") })
            .first(where: { FileManager.default.fileExists(atPath: $0.path) })
        {
            url = found
        } else {
            let known = names()
            throw LoadError(
                description: "no scenario named '\(nameOrPath)'"
                    + (known.isEmpty
                        ? " (and no scenario folder found; set HRM_SIM_SCENARIOS)"
                        : "; shipped: \(known.joined(separator: ", "))"))
        }
        let data: Data
        do {
            data = try Data(contentsOf: url)
        } catch {
            throw LoadError(description: "cannot read \(url.path): \(error.localizedDescription)")
        }
        let scenario: Scenario
        do {
            scenario = try JSONDecoder().decode(Scenario.self, from: data)
        } catch let error as DecodingError {
            throw LoadError(description: "\(url.path): \(describe(error))")
        }
        do {
            try scenario.validate()
        } catch {
            throw LoadError(description: "\(url.path): \(error)")
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
