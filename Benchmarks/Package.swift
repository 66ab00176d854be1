// swift-tools-version: 6.1
// Benchmarks for hrm, run with `make bench` (package-benchmark). A package of its own so that the
// benchmark harness and its dependencies never slow down `make test`.
import PackageDescription

let package = Package(
    name: "hrm-benchmarks",
    platforms: [.macOS(.v15)],
    dependencies: [
        .package(name: "hrm", path: ".."),
        .package(url: "https://github.com/ordo-one/benchmark", from: "1.38.1", traits: ["MallocInterposer"]),
    ],
    targets: [
        .executableTarget(
            name: "HeartRateBenchmarks",
            dependencies: [
                .product(name: "HeartRate", package: "hrm"),
                .product(name: "Benchmark", package: "benchmark"),
            ],
            path: "HeartRateBenchmarks",
            plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]
        ),
        .executableTarget(
            name: "HRVBenchmarks",
            dependencies: [
                .product(name: "HRV", package: "hrm"),
                .product(name: "Benchmark", package: "benchmark"),
            ],
            path: "HRVBenchmarks",
            plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]
        ),
        .executableTarget(
            name: "ECGBenchmarks",
            dependencies: [
                .product(name: "PolarPMD", package: "hrm"),
                .product(name: "ECG", package: "hrm"),
                .product(name: "Benchmark", package: "benchmark"),
            ],
            path: "ECGBenchmarks",
            plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]
        ),
    ],
    swiftLanguageModes: [.v6]
)
