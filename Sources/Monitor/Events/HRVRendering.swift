package import HRV

/// How HRV figures read, in `hrm hrv` and in watch's `hrv` events: the same keys and rounding in
/// both, so a consumer parses one form.
package enum HRVRendering {
    /// `beats`, `artefacts`, `mean_nn_ms`, `sdnn_ms`, `rmssd_ms`, `pnn50`, `mean_hr`, `alpha1`, in
    /// that order; figures to 2 decimals, null where they cannot be computed.
    package static func addFields(of metrics: HRVMetrics, to json: inout JSONLine) {
        json.add("beats", metrics.beats)
        json.add("artefacts", metrics.artefacts)
        json.add("mean_nn_ms", rounded(metrics.meanNN))
        json.add("sdnn_ms", rounded(metrics.sdnn))
        json.add("rmssd_ms", rounded(metrics.rmssd))
        json.add("pnn50", rounded(metrics.pnn50))
        json.add("mean_hr", rounded(metrics.meanHR))
        json.add("alpha1", rounded(metrics.alpha1))
    }

    /// `artefacts_at`: the RR intervals changed (numbered from 0 in the input) by kind, in the
    /// kinds' order: `{"missed":[150],"extra":[299,300],"ectopic":[],"long":[],"short":[]}`;
    /// `removed` (unmeasurable RRs, which `hrm hrv`'s input cannot hold) only when there are any.
    package static func addArtefacts(_ artefacts: [Artefact], to json: inout JSONLine) {
        var kinds = JSONLine()
        for kind in ArtefactKind.allCases {
            let indexes = artefacts.filter { $0.kind == kind }.map(\.index).sorted()
            if kind == .removed, indexes.isEmpty { continue }
            kinds.add(JSONLine.Key(kind.rawValue), indexes)
        }
        json.add("artefacts_at", object: kinds)
    }

    /// `artefacts at RR: missed 150; extra 299 300; ectopic 450 451` (numbered from 0 in the
    /// input), or `no artefacts`: `hrm hrv --explain`'s line under each result.
    package static func artefactsText(_ artefacts: [Artefact]) -> String {
        let kinds = ArtefactKind.allCases.compactMap { kind -> String? in
            let indexes = artefacts.filter { $0.kind == kind }.map(\.index).sorted()
            guard !indexes.isEmpty else { return nil }
            return kind.rawValue + " " + indexes.map(String.init).joined(separator: " ")
        }
        return kinds.isEmpty ? "no artefacts" : "artefacts at RR: " + kinds.joined(separator: "; ")
    }

    /// `RMSSD 45.2 ms  SDNN 50.1 ms  pNN50 20.3 %  mean HR 64.2 bpm  alpha1 0.85  (60 beats, 1 artefact corrected)`
    package static func text(_ metrics: HRVMetrics) -> String {
        var parts: [String] = []
        if let rmssd = metrics.rmssd { parts.append("RMSSD \(decimal(rmssd, 1)) ms") }
        if let sdnn = metrics.sdnn { parts.append("SDNN \(decimal(sdnn, 1)) ms") }
        if let pnn50 = metrics.pnn50 { parts.append("pNN50 \(decimal(pnn50, 1)) %") }
        if let meanHR = metrics.meanHR { parts.append("mean HR \(decimal(meanHR, 1)) bpm") }
        if let alpha1 = metrics.alpha1 { parts.append("alpha1 \(decimal(alpha1, 2))") }
        let artefacts =
            metrics.artefacts == 0
            ? "" : ", \(metrics.artefacts) artefact\(metrics.artefacts == 1 ? "" : "s") corrected"
        parts.append("(\(metrics.beats) beat\(metrics.beats == 1 ? "" : "s")\(artefacts))")
        return parts.joined(separator: "  ")
    }

    /// To 2 decimals, as the JSON carries them.
    package static func rounded(_ value: Double?) -> Double? {
        guard let value, value.isFinite else { return nil }
        return (value * 100).rounded() / 100
    }

    /// `value` with exactly `places` decimals (0 to 3), for people.
    package static func decimal(_ value: Double, _ places: Int) -> String {
        let scale = [1.0, 10, 100, 1000][min(max(places, 0), 3)]
        let scaled = (value * scale).rounded()
        guard scaled.magnitude < 1e15 else { return String(value) }
        let whole = Int(scaled)
        guard places > 0 else { return String(whole) }
        let sign = whole < 0 ? "-" : ""
        let digits = String(whole.magnitude)
        let padded = String(repeating: "0", count: max(places + 1 - digits.count, 0)) + digits
        return sign + padded.dropLast(places) + "." + padded.suffix(places)
    }
}
