import Foundation
import ShelfCore
import ShelfDatabase
import ShelfTestSupport
import Testing

@testable import Shelf

@Suite(.serialized) struct ExportTests {
    static let ffmpegInstalled = (try? Library.findFFmpeg(nil)) != nil

    @Test func hostileTagsNeverLeaveTheTargetDirectory() async throws {
        let (dir, library, ids, _) = try await EditTests.makeLibrary(4)
        defer { withExtendedLifetime(dir) {} }  // the directory must outlive every read below
        let hostile = ["../../etc/passwd", "a/b\\c", "tab\there\u{7}bell\u{202E}", String(repeating: "長", count: 1_000)]
        try await library.write { batch in
            for (id, text) in zip(ids, hostile) {
                try batch.updateTrack(id) {
                    $0.title = text
                    $0.album = text
                    $0.albumArtist = ".."
                }
            }
        }
        let target = dir.path("export")
        let result = try await library.export(ids, to: target, options: ExportOptions(format: .copy))
        #expect(result.failed.isEmpty && result.skipped.isEmpty, "\(result.failed)")
        #expect(result.exported.count == 4 && result.exported.allSatisfy { $0.track != nil })
        for item in result.exported {
            let path = URL(fileURLWithPath: item.path).standardizedFileURL.path
            #expect(path.hasPrefix(target.path + "/"), "\(path)")
            #expect(!path.contains("/../") && !path.unicodeScalars.contains { $0.properties.generalCategory == .control })
            for component in URL(fileURLWithPath: path).pathComponents { #expect(component.utf8.count <= 130) }
        }
        #expect(!FileManager.default.fileExists(atPath: dir.path("etc/passwd").path))
        // The template itself may not climb out either, and names are never overwritten unasked.
        let climbing = try await library.export([ids[0]], to: target, options: ExportOptions(format: .copy, template: "../{title}.{ext}"))
        #expect(climbing.exported.isEmpty && climbing.failed.count == 1)
        let again = try await library.export([ids[0]], to: target, options: ExportOptions(format: .copy))
        #expect(again.exported.isEmpty && again.failed.first?.error.contains("exists") == true)
        #expect(ExportNaming.component("..") == "Unknown" && ExportNaming.component(" /x/ ") == "_x_")
    }

    @Test(.enabled(if: ExportTests.ffmpegInstalled))
    func everyFormatIsRenderedTaggedAndRegistered() async throws {
        let (dir, library, ids, _) = try await EditTests.makeLibrary(1)
        defer { withExtendedLifetime(dir) {} }  // the directory must outlive every read below
        try await library.write { batch in
            try batch.updateTrack(ids[0]) {
                $0.sortArtist = "うただ"
                $0.composer = "作曲者"
                $0.year = 2001
                $0.trackNumber = 3
            }
        }
        let source = try #require(try await library.track(ids[0]))
        let artworkID = try #require(source.artworkID)
        let picture = try await library.artworkData(artworkID)
        for format in ExportFormat.allCases {
            let options = ExportOptions(
                format: format, bitrate: 96, sampleRate: format == .copy ? nil : 24_000, channels: format == .copy ? nil : 1,
                template: "\(format.rawValue)/{title}.{ext}")
            let result = try await library.export(ids, to: dir.path("out"), options: options)
            #expect(result.failed.isEmpty, "\(format): \(result.failed)")
            let item = try #require(result.exported.first)
            let tags = try TagFile.read(URL(fileURLWithPath: item.path))
            #expect(tags.properties["TITLE"] == "Song 0" && tags.properties["ARTISTSORT"] == "うただ" && tags.properties["LYRICS"] == "la la 0", "\(format)")
            #expect(tags.picture == picture, "\(format)")
            // (Opus always decodes at 48 kHz, which is what TagLib reports.)
            if format != .copy { #expect(tags.sampleRate == (format == .opus ? 48_000 : 24_000), "\(format)") }
            // (TagLib reports an AAC stream's channel layout from its container, not the encoder's mono.)
            if format != .copy && format != .m4a { #expect(tags.channels == 1, "\(format)") }
            let newID = try #require(item.track)
            let registered = try #require(try await library.track(newID))
            #expect(registered.title == "Song 0" && registered.composer == "作曲者" && registered.year == 2001 && registered.trackNumber == 3)
            #expect(registered.artworkID != nil && registered.id != ids[0])
        }
        await #expect(throws: ExportError.self) {
            try await library.export(ids, to: dir.path("none"), options: ExportOptions(format: .opus, sampleRate: 22_050))
        }
        let missing = ExportOptions(format: .flac, ffmpegPath: "/nonexistent/ffmpeg")
        // A missing ffmpeg is the one tool error, naming the package to install.
        await #expect(throws: ToolError(tool: "ffmpeg", reason: .notInstalled(searched: "/nonexistent/ffmpeg", package: "ffmpeg"))) {
            try await library.export(ids, to: dir.path("none"), options: missing)
        }
    }

    enum Change: CaseIterable { case cancel, deleteTrack, failRead, editMetadata }

    /// Seed 000's export cases, with the picture read held: a cancellation, the track's deletion
    /// or a failed read leaves nothing rendered and nothing registered; an edit made meanwhile
    /// does not reach the export, which carries the values from its start.
    @Test(arguments: Change.allCases)
    func theExportsPictureReadHeld(_ change: Change) async throws {
        let (dir, library, ids, _) = try await EditTests.makeLibrary(1)
        defer { withExtendedLifetime(dir) {} }  // the directory must outlive every read below
        let started = Gate()
        let gate = Gate()
        let loader = library.makeArtworkLoader(beforeRead: { _ in
            await started.open()
            await gate.wait()
            if change == .failRead { throw HeldReadFailed() }
        })
        let before = try await library.info().trackCount
        let target = dir.path("export")
        let export = Task { try await library.export(ids, to: target, options: ExportOptions(format: .copy), loader: loader) }
        await started.wait()
        switch change {
        case .cancel: export.cancel()
        case .deleteTrack: try await library.write { try $0.deleteTrack(ids[0]) }
        case .failRead: break
        case .editMetadata: try await library.write { batch in try batch.updateTrack(ids[0]) { $0.title = "Edited meanwhile" } }
        }
        await gate.open()
        let result = try await export.value
        let files = FileManager.default.enumerator(atPath: target.path)?.allObjects.compactMap { $0 as? String }.filter { $0.hasSuffix(".wav") } ?? []
        if change == .editMetadata {
            let item = try #require(result.exported.first)
            #expect(try TagFile.read(URL(fileURLWithPath: item.path)).properties["TITLE"] == "Song 0")
            let newID = try #require(item.track)
            #expect(try await library.track(newID)?.title == "Song 0")
        } else {
            #expect(result.exported.isEmpty && files.isEmpty, "\(change): \(files)")
            #expect(try await library.info().trackCount == before - (change == .deleteTrack ? 1 : 0))
            if change == .failRead { #expect(result.failed.count == 1) } else { #expect(result.skipped.count == 1) }
        }
    }
}
