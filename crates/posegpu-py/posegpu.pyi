"""posegpu: skeletal animation poses for huge crowds, evaluated with wgpu compute shaders, with
a CPU twin of every GPU stage.

Every pose array is float32; a transform is 10 floats: quaternion x y z w, translation x y z,
scale x y z. (`posegpu eval`'s JSON writes translation first: `[tx, ty, tz, qx, qy, qz, qw,
sx, sy, sz]`; `pose.component[..., [4, 5, 6, 0, 1, 2, 3, 7, 8, 9]]` is that order.)
"""

import os
from typing import Any, Dict, List, Optional, Sequence, Tuple, Union

import numpy as np
import numpy.typing as npt


__version__: str
DEFAULT_TOLERANCE: float
"""The default compression tolerance: 3e-4 of the skeleton's height."""

_Path = Union[str, "os.PathLike[str]"]
_Clip = Union[int, str]
_Clips = Union[int, str, Sequence[int], Sequence[str], npt.NDArray[np.integer], npt.NDArray[np.str_]]
_Times = Union[float, Sequence[float], npt.NDArray[np.floating], npt.NDArray[np.integer]]
_Rig = Union[None, str, "os.PathLike[str]", Dict[str, Any]]
_Ik = Union[None, bool, Dict[str, float]]

class _Procedural:
    """Assets built in code (`posegpu.procedural`)."""

    @staticmethod
    def humanoid() -> Asset:
        """The 67-bone procedural humanoid with its clips idle, walk, run, wave."""
    @staticmethod
    def humanoid_variant(seed: int) -> Asset:
        """The humanoid with other proportions and rest orientations (seeded)."""
    @staticmethod
    def random_asset(seed: int, bones: int, clips: int = 1) -> Asset:
        """A random skeleton with clips (seeded)."""

procedural: _Procedural

class Error(Exception):
    """Every error posegpu raises. Its message is the one the `posegpu` command prints."""

    causes: List[str]
    """The errors behind this one (wgpu's, the operating system's), outermost first."""

class LoadError(Error):
    """A file could not be read: missing, too large, of an unknown type, or malformed."""

class DataError(Error):
    """A skeleton, clip, notify, curve or compression setting that does not hold together."""

class RetargetError(Error):
    """Retargeting cannot be done as asked (not a humanoid, a rig in error...)."""

class PlaybackError(Error):
    """An instance, crowd, player, montage, transition or blend space that cannot play."""

class GpuError(Error):
    """No GPU adapter, or a device operation that failed."""

class ArgumentError(Error, ValueError):
    """A bad argument: wrong dtype or shape, an unknown clip or bone name, a NaN time."""

def load(source: Union[_Path, bytes, bytearray, memoryview], format: Optional[str] = None, name: Optional[str] = None) -> Asset:
    """Loads a .glb, .gltf (the first skin) or .bvh file by path, or the same formats from
    bytes with `format` ("glb", "gltf" or "bvh"); `name` names bytes in errors."""

def gpu_adapter() -> Optional[str]:
    """The adapter `backend="gpu"` uses (name, type, API), or None when there is none."""

class Asset:
    """A skeleton and the clips that animate it (bones parents first)."""

    @property
    def bone_names(self) -> List[str]:
        """Bone names, parents first: the order of `posegpu eval`'s JSON and of every pose array."""
    @property
    def parents(self) -> npt.NDArray[np.int32]:
        """Each bone's parent index, -1 for a root."""
    @property
    def clip_names(self) -> List[str]: ...
    @property
    def clip_durations(self) -> npt.NDArray[np.float32]: ...
    @property
    def bone_count(self) -> int: ...
    @property
    def rest(self) -> npt.NDArray[np.float32]:
        """The reference (node) pose's local transforms, (B, 10)."""
    @property
    def path(self) -> Optional[str]:
        """The glTF file it was loaded from (whose meshes `save_glb` keeps), else None."""
    @property
    def notifies(self) -> Dict[str, List[Tuple[str, float]]]:
        """Per clip with any: [(notify name, seconds), ...]."""
    def with_notifies(self, notifies: Union[_Path, Dict[str, Sequence[Tuple[str, float]]]]) -> Asset:
        """A copy with notifies added, from a dict or a sidecar JSON file."""
    def find_bone(self, name: str) -> int: ...
    def save_glb(self, path: _Path) -> None:
        """Writes the skeleton and clips as binary glTF (over its glTF file's meshes and skins
        where it has one)."""
    def __len__(self) -> int: ...

class Library:
    """A validated, packed, immutable set of clips on one skeleton.

    With `sources`, every clip of each source asset follows the target's own, retargeted:
    through a character plan by default (IK after retargeting at `ik`'s weights; None: feet 1,
    hands 0), through UE's per-bone modes when `rig` sets them. `rest`: "bind" or "nodes".
    `bake`: retarget once when built. `compress`: True or a tolerance.
    """

    def __init__(
        self,
        asset: Asset,
        compress: Union[None, bool, float] = None,
        sources: Optional[Sequence[Asset]] = None,
        rig: _Rig = None,
        ik: _Ik = None,
        rest: Optional[str] = None,
        bake: bool = False,
    ) -> None: ...
    @property
    def clip_names(self) -> List[str]: ...
    @property
    def bone_names(self) -> List[str]: ...
    @property
    def parents(self) -> npt.NDArray[np.int32]: ...
    @property
    def clip_count(self) -> int: ...
    @property
    def bone_count(self) -> int: ...
    @property
    def clip_durations(self) -> npt.NDArray[np.float32]: ...
    @property
    def clip_sources(self) -> npt.NDArray[np.int32]:
        """Per clip, the index in `sources` it comes from (-1: the target's own)."""
    @property
    def curve_names(self) -> List[str]: ...
    @property
    def target(self) -> Asset: ...
    @property
    def sources(self) -> List[Asset]: ...
    @property
    def ik(self) -> Dict[str, float]: ...
    @property
    def compress(self) -> Optional[float]: ...
    def find_clip(self, name: str, source: Optional[int] = None) -> int: ...
    def compression_report(self, tolerance: Optional[float] = None) -> List[Dict[str, Any]]:
        """Per clip what `posegpu info --compress` prints: name, source, raw_bytes,
        packed_bytes, ratio, worst_error, played_error, seconds."""
    def plan(self, source: int = 0) -> RetargetPlan: ...
    def quality(self, clip: _Clip, frames: int = 400, ik: _Ik = None) -> QualityReport: ...

class Pose:
    """Poses of N instances of a B-bone skeleton (each array made on first access)."""

    @property
    def component(self) -> npt.NDArray[np.float32]:
        """Component-space transforms, (N, B, 10)."""
    @property
    def locals(self) -> npt.NDArray[np.float32]:
        """Local transforms, (N, B, 10)."""
    @property
    def skinning(self) -> npt.NDArray[np.float32]:
        """Skinning matrices (component-space times inverse bind), (N, B, 3, 4)."""
    @property
    def curves(self) -> npt.NDArray[np.float32]:
        """Curve values, (N, C)."""
    @property
    def instance_count(self) -> int: ...
    @property
    def bone_count(self) -> int: ...
    def __len__(self) -> int: ...

class Evaluator:
    """Evaluates instances of a library on the CPU twin or the GPU (the GIL released)."""

    def __init__(self, library: Library, backend: str = "cpu") -> None: ...
    @property
    def backend(self) -> str: ...
    @property
    def library(self) -> Library: ...
    @property
    def rust_seconds(self) -> float:
        """Seconds the last evaluate spent inside posegpu's evaluator."""
    def evaluate(self, clips: _Clips, times: _Times, loop: bool = False, ik: _Ik = None) -> Pose:
        """One instance per (clip, time); scalars are shared by every instance."""

class Player:
    """A sequence player: effective rate clamp(scale * rate / rate_basis + bias)."""

    def __init__(
        self,
        clip: _Clip,
        rate: float = 1.0,
        rate_basis: float = 1.0,
        scale: float = 1.0,
        bias: float = 0.0,
        clamp: Optional[Tuple[float, float]] = None,
        start: float = 0.0,
        loop: bool = True,
        weight: float = 1.0,
    ) -> None: ...
    @property
    def clip(self) -> _Clip: ...
    @property
    def rate(self) -> float: ...
    @property
    def rate_basis(self) -> float: ...
    @property
    def scale(self) -> float: ...
    @property
    def bias(self) -> float: ...
    @property
    def clamp(self) -> Optional[Tuple[float, float]]: ...
    @property
    def start(self) -> float: ...
    @property
    def loop(self) -> bool: ...
    @property
    def weight(self) -> float: ...
    @property
    def effective_rate(self) -> float: ...

class BlendSpace1D:
    """Samples on a line: [(x, clip), ...]."""

    def __init__(self, samples: Sequence[Tuple[float, _Clip]]) -> None: ...
    def weights(self, x: float) -> List[float]:
        """One weight per sample, in the order given."""
    def __len__(self) -> int: ...

class BlendSpace2D:
    """Samples in a plane: [(x, y, clip), ...], "triangulated" or "grid"."""

    def __init__(self, samples: Sequence[Tuple[float, float, _Clip]], kind: str = "triangulated") -> None: ...
    def weights(self, x: float, y: float) -> List[float]:
        """One weight per sample, in the order given."""
    def __len__(self) -> int: ...

class Crowd:
    """Instances that play their own players, stepped on the CPU twin or the GPU."""

    def __init__(self, library: Library, backend: str = "cpu") -> None: ...
    @property
    def backend(self) -> str: ...
    def add(
        self,
        players: Union[None, Player, Sequence[Player]] = None,
        sync: bool = False,
        root_motion: Optional[str] = None,
        root_axes: str = "everything",
        root_mode: str = "everything",
        ik: _Ik = None,
        transitions: bool = False,
        blend: Union[None, BlendSpace1D, BlendSpace2D] = None,
        parameter: Union[None, float, Tuple[float, float]] = None,
    ) -> int:
        """Adds an agent; returns its instance index. root_motion: None, "ref_pose",
        "first_frame", "zero" or "extract"."""
    def add_montage(self, name: str, segments: Sequence[Tuple[_Clip, float, float]]) -> int:
        """Adds a montage track of clip segments; returns the track for Player(track)."""
    def track_length(self, track: int) -> float: ...
    def step(self, dt: float) -> None:
        """Advances every player by dt and evaluates every pose."""
    def set_parameter(self, instance: int, x: float, y: Optional[float] = None) -> None: ...
    def positions(self) -> npt.NDArray[np.float32]:
        """Track seconds, (N, P), NaN where an instance has fewer players."""
    def weights(self) -> npt.NDArray[np.float32]:
        """Player weights, (N, P), NaN-padded as positions."""
    def finished(self) -> List[int]: ...
    def events(self) -> List[Dict[str, Any]]: ...
    def poses(self) -> Pose: ...
    def placements(self) -> npt.NDArray[np.float32]:
        """(N, 10)."""
    def root_motion(self) -> npt.NDArray[np.float32]:
        """(N, 10): the last step's root motion."""
    def set_placement(self, instance: int, placement: Union[Sequence[float], npt.NDArray[np.floating]]) -> None: ...
    def set_weights(self, instance: int, weights: Sequence[float]) -> None: ...
    def set_player(self, instance: int, k: int, player: Player) -> None: ...
    def restart(self, instance: int) -> None: ...
    def transition_to(self, instance: int, player: Player, blend_time: float, kind: str = "inertialize") -> None: ...
    def __len__(self) -> int: ...

class RetargetPlan:
    """The character retargeting plan of one (source, target) pair of humanoids."""

    def __init__(self, source: Asset, target: Asset, rig: _Rig = None, rest: Optional[str] = None) -> None: ...
    def describe(self) -> str:
        """What `posegpu info TARGET --against SOURCE` prints."""
    @property
    def hip_height_ratio(self) -> float: ...
    @property
    def bones(self) -> List[Dict[str, Any]]: ...
    def quality(self, clip: _Clip, frames: int = 400, ik: _Ik = None) -> QualityReport: ...
    def bake(self, clips: Union[None, _Clip, Sequence[_Clip]] = None, ik: _Ik = None) -> Asset: ...

class QualityReport:
    """How closely a retargeted clip follows its source; str() is `posegpu retarget --report`'s table."""

    @property
    def frames(self) -> int: ...
    @property
    def meets_aim(self) -> bool: ...
    @property
    def limbs(self) -> List[Dict[str, Any]]: ...
    def summary(self) -> str: ...
    def to_dict(self) -> Dict[str, Any]: ...

def retarget(
    source: Asset,
    target: Asset,
    clips: Union[None, _Clip, Sequence[_Clip]] = None,
    method: str = "character",
    rig: _Rig = None,
    rest: Optional[str] = None,
    ik: _Ik = None,
) -> Asset:
    """Converts source's clips onto target once, as `posegpu retarget` does."""

def retarget_dataset(
    sources: Union[_Path, Sequence[_Path]],
    targets: Union[_Path, Sequence[_Path]],
    out_dir: _Path,
    npz: bool = False,
    workers: Optional[int] = None,
    shard: Optional[Tuple[int, int]] = None,
    method: str = "character",
    rig: _Rig = None,
    rest: Optional[str] = None,
    ik: _Ik = None,
    report_frames: int = 400,
    skip_existing: bool = False,
    progress: bool = True,
) -> Dict[str, Any]:
    """Every clip of every source onto every target: .glb (and .npz), report.json and report.csv."""
