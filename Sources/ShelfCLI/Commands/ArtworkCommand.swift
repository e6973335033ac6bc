import Foundation
import Shelf
import ShelfCore

/// `shelf artwork`: a track's picture decoded to a size and written as PNG or JPEG, or what the
/// artwork table holds.
struct ArtworkCommand: Command {
    static let name = "artwork"
    static let abstract = "Write a track's picture at a size (--out FILE.png|FILE.jpg), or show the stored pictures' --stats."
    static let synopsis = "(TRACK_ID --size PX --out FILE.png|FILE.jpg [--quality 1-100] | --stats) [--json]"

    enum Mode {
        case thumbnail(TrackID, size: Int, out: URL, format: ImageCodec.Format)
        case stats
    }

    let mode: Mode

    init(arguments: inout Arguments) throws {
        if arguments.flag("--stats") {
            guard try arguments.positionals().isEmpty else { throw UsageError("artwork --stats takes no track ID") }
            mode = .stats
            return
        }
        let size = try arguments.intOption("--size", in: 1...16_384)
        let out = try arguments.option("--out")
        let quality = try arguments.intOption("--quality", in: 1...100) ?? 88
        let words = try arguments.positionals()
        guard words.count == 1 else { throw UsageError("artwork expects one track ID (or --stats)") }
        guard let size else { throw UsageError("artwork needs --size PX") }
        guard let out else { throw UsageError("artwork needs --out FILE.png or FILE.jpg") }
        let format: ImageCodec.Format
        switch URL(fileURLWithPath: out).pathExtension.lowercased() {
        case "png": format = .png
        case "jpg", "jpeg": format = .jpeg(quality: quality)
        default: throw UsageError("--out must end in .png, .jpg or .jpeg, got '\(out)'")
        }
        mode = .thumbnail(try parseTrackID(words[0]), size: size, out: URL(fileURLWithPath: out), format: format)
    }

    struct Written: Encodable {
        let trackID: TrackID
        let artworkID: ArtworkID
        let width: Int
        let height: Int
        let format: String
        let bytes: Int
        let out: String
    }

    func run(library: Library, output: Output) async throws {
        switch mode {
        case .stats:
            let stats = try await library.artworkStoreStats()
            if output.json { return try output.printJSON(stats) }
            output.line("pictures:            \(stats.pictures)")
            output.line("bytes:               \(stats.bytes)")
            output.line("largest:             \(stats.largestBytes)")
            output.line("tracks with artwork: \(stats.tracksWithArtwork)")
            output.line("shared pictures:     \(stats.sharedPictures)")
        case .thumbnail(let id, let size, let out, let format):
            guard let track = try await library.track(id) else { throw LibraryError.trackNotFound(id) }
            guard let artworkID = track.artworkID else {
                throw CommandFailure(code: "noArtwork", message: "track \(id) has no picture")
            }
            let encoded: Data
            let image: DecodedImage
            do {
                image = try await library.artwork.image(for: ArtworkRequest(trackID: id, artworkID: artworkID), maxPixelSize: size)
                encoded = try ImageCodec.encode(image, as: format)
            } catch let error as ImageError {
                throw CommandFailure(code: "invalidImage", message: "picture \(artworkID) of track \(id): \(error)")
            }
            do {
                try encoded.write(to: out, options: .atomic)
            } catch {
                throw CommandFailure(code: "cannotWrite", message: "cannot write \(out.path): \(error.localizedDescription)")
            }
            let name = if case .png = format { "png" } else { "jpeg" }
            let written = Written(
                trackID: id, artworkID: artworkID, width: image.width, height: image.height, format: name,
                bytes: encoded.count, out: out.path)
            if output.json { return try output.printJSON(written) }
            output.line("wrote \(out.path): \(image.width)×\(image.height) \(name), \(encoded.count) bytes")
        }
    }
}

extension ArtworkCommand {
    static let discussion = """
        Decodes a track's stored picture to fit within PX×PX (JPEG by DCT scaling, so a thumbnail never decodes \
        the full image) and writes it as PNG or JPEG by the extension of --out. --stats instead reports the \
        stored pictures: how many, their bytes, the largest, and how many are shared between tracks.
        """
    static let flags = [
        FlagHelp("--size", "PX", "The box the picture is scaled to fit (1 to 16384 pixels); required with a track ID."),
        FlagHelp("--out", "FILE.png|FILE.jpg", "Where to write it; the extension picks the format; required with a track ID.", completes: .file),
        FlagHelp("--quality", "1-100", "JPEG quality.", default: "88"),
        FlagHelp("--stats", nil, "Report the stored pictures instead of writing one."),
    ]
    static let examples = ["shelf artwork 42 --size 300 --out cover.jpg", "shelf artwork 42 --size 64 --out thumb.png --json", "shelf artwork --stats"]
}
