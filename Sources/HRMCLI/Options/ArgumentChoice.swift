public import ArgumentParser

/// One of a closed set of words an option takes (`--format json`), spelt as its raw value.
///
/// The lists help and completions show are made from the raw values directly. ArgumentParser's
/// own defaults make them through a key path and `String(describing:)`, and it asks for them at
/// every start, for every such option of the command being parsed: 2.5 million instructions of a
/// `hrm watch` start (Benchmarks/Watch/README.md, #29).
public protocol ArgumentChoice: ExpressibleByArgument, CaseIterable, RawRepresentable
where RawValue == String {}

extension ArgumentChoice {
    /// Every raw value, in declaration order.
    public static var allValueStrings: [String] { allCases.map { $0.rawValue } }
    /// None: a value's description is its raw value.
    public static var allValueDescriptions: [String: String] { [:] }
    /// The raw values, for a shell's completion.
    public static var defaultCompletionKind: CompletionKind { .list(allValueStrings) }
    /// The raw value (`--format`'s default shows as `text`).
    public var defaultValueDescription: String { rawValue }
}
