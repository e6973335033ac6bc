import Foundation
import Shelf

/// A library in a temporary directory that lives as long as this value: the fixture most engine
/// tests start from, instead of `TemporaryDirectory()` and `Library(directory:)` written out again.
public final class TemporaryLibrary: Sendable {
    /// The directory holding the library (and anything else a test puts beside it).
    public let directory: TemporaryDirectory
    /// The library, opened on `directory`.
    public let library: Library

    /// An empty library, opened with `configuration`.
    public init(configuration: Library.Configuration = Library.Configuration()) throws {
        directory = try TemporaryDirectory()
        library = Library(directory: directory.url, configuration: configuration)
    }

    /// A library of `tracks` generated tracks (`DatasetGenerator`, the same for the same seed),
    /// with the mirror built when `mirror` is true.
    public static func seeded(tracks: Int, seed: UInt64 = 1, tagged: Bool = true, mirror: Bool = true) async throws -> TemporaryLibrary {
        let made = try TemporaryLibrary()
        _ = try await DatasetGenerator(tracks: tracks, seed: seed, tagged: tagged).fill(made.library, chunkSize: 500)
        if mirror { try await made.library.buildMirror(wait: true) }
        return made
    }
}
