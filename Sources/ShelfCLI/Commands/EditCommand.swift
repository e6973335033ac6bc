import Foundation
import Shelf
import ShelfCore
import ShelfWire

/// `shelf edit`: sets fields (and the picture) of tracks in their files and in the library; each
/// file is rewritten atomically, so a failure leaves it byte for byte as it was.
struct EditCommand: Command {
    static let name = "edit"
    static let abstract =
        "Edit tracks' tags in their files and the library: --set FIELD=VALUE (empty clears), --picture FILE or --remove-picture; files are rewritten atomically."
    static let synopsis = "ID… --set FIELD=VALUE… [--picture FILE | --remove-picture] [--json]"

    let ids: [TrackID]
    let changes: MetadataChanges

    init(arguments: inout Arguments) throws {
        var values: [EditableField: String?] = [:]
        while let assignment = try arguments.firstOption("--set") {
            guard let equals = assignment.firstIndex(of: "="), let field = EditableField(rawValue: String(assignment[..<equals])) else {
                throw UsageError(
                    "--set expects FIELD=VALUE with FIELD one of \(EditableField.allCases.map(\.rawValue).joined(separator: ", ")), got '\(assignment)'")
            }
            let value = String(assignment[assignment.index(after: equals)...])
            values[field] = value.isEmpty ? String?.none : value
        }
        let pictureFile = try arguments.option("--picture")
        let removePicture = arguments.flag("--remove-picture")
        if pictureFile != nil && removePicture { throw UsageError("--picture and --remove-picture cannot be combined") }
        var picture = PictureChange.unchanged
        if let pictureFile {
            guard let data = FileManager.default.contents(atPath: pictureFile) else { throw UsageError("--picture: cannot read '\(pictureFile)'") }
            picture = .set(data)
        } else if removePicture {
            picture = .remove
        }
        changes = MetadataChanges(values, picture: picture)
        if let problem = changes.problem() { throw UsageError("--set: \(problem)") }
        ids = try arguments.positionals().map { word in
            guard let id = Int64(word), id > 0 else { throw UsageError("'\(word)' is not a track ID") }
            return TrackID(id)
        }
        if ids.isEmpty { throw UsageError("edit expects track IDs") }
        if values.isEmpty && picture == .unchanged { throw UsageError("edit expects --set FIELD=VALUE, --picture or --remove-picture") }
    }

    func run(library: Library, output: Output) async throws {
        let (ids, changes) = (ids, changes)
        let result = try await runInterruptible(label: "editing", cancelledMessage: "edit cancelled") { _ in try await library.edit(ids, changes) }
        if output.json {
            try output.printJSON(EditDocument(result))
        } else {
            output.line("updated \(result.updated.count), skipped \(result.skipped.count), failed \(result.failed.count)")
        }
        Self.finish(skipped: result.skipped, failed: result.failed, of: ids.count, output: output, what: "written; their files are unchanged")
    }

    /// Lists skipped and failed items (text mode) and exits with status 2 when any failed: the
    /// result already printed is the one JSON document, the failure is the exit status.
    static func finish(skipped: [EditResult.Skipped], failed: [EditResult.Failed], of total: Int, output: Output, what: String) {
        if !output.json {
            for item in skipped { output.line("skipped \(item.id): \(item.reason)") }
            for item in failed { output.line("failed \(item.id) (\(item.path)): \(item.error)") }
        }
        guard !failed.isEmpty else { return }
        Output.log("shelf: \(failed.count) of \(total) tracks could not be \(what)")
        exit(2)
    }
}

/// `shelf draft`: what an edit form would start from: stored values, the picture, the file's tags.
struct DraftCommand: Command {
    static let name = "draft"
    static let abstract =
        "Show a track's editable values: the library's (or the file's when the stored picture cannot load), its picture size and the file's own tags."
    static let synopsis = "ID [--json]"

    let id: TrackID

    init(arguments: inout Arguments) throws {
        let words = try arguments.positionals()
        guard words.count == 1, let value = Int64(words[0]), value > 0 else { throw UsageError("draft expects one track ID") }
        id = TrackID(value)
    }

    struct Result: Encodable {
        let track: Track
        let source: String
        let picture: [String: Int]?
        let fileTags: [String: String]?
    }

    func run(library: Library, output: Output) async throws {
        let draft = try await library.editableDraft(for: id)
        let picture = draft.picture.map { ["width": $0.width, "height": $0.height] }
        if output.json {
            return try output.printJSON(Result(track: draft.track, source: draft.source.rawValue, picture: picture, fileTags: draft.fileTags?.properties))
        }
        output.line("track \(id) (values from the \(draft.source.rawValue))")
        for (label, value) in [
            ("title", draft.track.title), ("artist", draft.track.artist), ("album", draft.track.album),
            ("album artist", draft.track.albumArtist), ("genre", draft.track.genre), ("year", draft.track.year.map(String.init)),
        ] {
            output.line("  \(label): \(value ?? "–")")
        }
        output.line("  picture: " + (picture.map { "\($0["width"]!)×\($0["height"]!)" } ?? "none"))
        if let tags = draft.fileTags?.properties {
            output.line("  file tags: " + tags.keys.sorted().map { "\($0)=\(tags[$0]!.prefix(40))" }.joined(separator: ", "))
        } else {
            output.line("  file tags: unreadable")
        }
    }
}

extension EditCommand {
    static let discussion = """
        Writes tags to the tracks' files and the library together. Each file is rewritten atomically (a copy \
        edited, flushed and renamed over the original), so a crash never leaves a half-written file. An empty \
        VALUE clears the field. The exit status is 2 when any file failed; that file is unchanged.
        """
    static let flags = [
        FlagHelp(
            "--set", "FIELD=VALUE", "A field to write (title, artist, album, albumArtist, genre, year, …); repeat for more; at least one edit is needed.",
            repeats: true),
        FlagHelp("--picture", "FILE", "Embed this JPEG or PNG as the front cover.", completes: .file),
        FlagHelp("--remove-picture", nil, "Remove the embedded pictures."),
    ]
    static let examples = [
        "shelf edit 12 --set genre=Jazz --set year=1999",
        "shelf edit 12 13 --set 'albumArtist=Various Artists' --json",
        "shelf edit 12 --picture cover.jpg",
    ]
}

extension DraftCommand {
    static let discussion = """
        Shows what an edit of the track starts from: the library's values (or the file's, when the stored \
        picture cannot be loaded), the picture's size, and the tags the file itself holds, so a tag editor \
        can show both.
        """
    static let flags: [FlagHelp] = []
    static let examples = ["shelf draft 12", "shelf draft 12 --json"]
}
