//! Finding an adapter and opening a device, or adopting a caller's.

use crate::error::{Error, Result};

/// A device and queue with what posegpu needs to know about them.
#[derive(Clone, Debug)]
pub struct GpuContext {
    /// The device every posegpu buffer and pipeline is made on.
    pub device: wgpu::Device,
    /// The device's queue, which posegpu submits to.
    pub queue: wgpu::Queue,
    /// The adapter's name, type and backend.
    pub info: wgpu::AdapterInfo,
}

impl GpuContext {
    /// Opens the best adapter there is: a discrete GPU, then an integrated or virtual one, then
    /// a software one (lavapipe). The device gets every limit the adapter has (large storage
    /// bindings for big crowds) and timestamp queries where available.
    /// `WGPU_BACKEND` (e.g. `vulkan`) restricts the backends tried.
    #[cfg(not(target_arch = "wasm32"))]
    pub fn new() -> Result<Self> {
        pollster::block_on(Self::new_async())
    }

    /// [`GpuContext::new`] without blocking, for callers with their own executor. In a browser:
    /// WebGPU's high-performance adapter, with the limits it has.
    pub async fn new_async() -> Result<Self> {
        let adapter = find_adapter().await.ok_or(Error::NoAdapter)?;
        let features = adapter.features() & wgpu::Features::TIMESTAMP_QUERY;
        let (device, queue) = adapter
            .request_device(&wgpu::DeviceDescriptor {
                label: Some("posegpu"),
                required_features: features,
                required_limits: adapter.limits(),
                ..Default::default()
            })
            .await
            .map_err(|e| Error::gpu("requesting a device", e))?;
        Ok(Self {
            device,
            queue,
            info: adapter.get_info(),
        })
    }

    /// Adopts a caller's device and queue, so that a renderer shares buffers with posegpu.
    pub fn from_device(device: wgpu::Device, queue: wgpu::Queue, info: wgpu::AdapterInfo) -> Self {
        Self {
            device,
            queue,
            info,
        }
    }

    /// True when pass timestamps can be measured.
    pub fn has_timestamps(&self) -> bool {
        self.device
            .features()
            .contains(wgpu::Features::TIMESTAMP_QUERY)
    }

    /// A one-line description: name, type and backend.
    pub fn describe(&self) -> String {
        format!(
            "{} ({:?}, {:?})",
            self.info.name, self.info.device_type, self.info.backend
        )
    }
}

/// The best adapter: native APIs first, GL only where they find nothing (probing GL/EGL is
/// slow and noisy).
#[cfg(not(target_arch = "wasm32"))]
async fn find_adapter() -> Option<wgpu::Adapter> {
    for backends in [wgpu::Backends::PRIMARY, wgpu::Backends::SECONDARY] {
        let mut desc = wgpu::InstanceDescriptor::new_without_display_handle_from_env();
        desc.backends = wgpu::Backends::from_env().unwrap_or(backends);
        let instance = wgpu::Instance::new(desc);
        let adapters = instance.enumerate_adapters(wgpu::Backends::all()).await;
        let adapter = adapters.into_iter().min_by_key(|a| rank(&a.get_info()));
        if adapter.is_some() {
            return adapter;
        }
    }
    None
}

/// A browser lists no adapters: it gives one, asked for high performance, over WebGPU.
#[cfg(target_arch = "wasm32")]
async fn find_adapter() -> Option<wgpu::Adapter> {
    let mut desc = wgpu::InstanceDescriptor::new_without_display_handle();
    desc.backends = wgpu::Backends::BROWSER_WEBGPU;
    let instance = wgpu::Instance::new(desc);
    let options = wgpu::RequestAdapterOptions {
        power_preference: wgpu::PowerPreference::HighPerformance,
        ..Default::default()
    };
    instance.request_adapter(&options).await.ok()
}

/// Lower is better: real GPUs first, native APIs before GL.
#[cfg(not(target_arch = "wasm32"))]
fn rank(info: &wgpu::AdapterInfo) -> (u8, u8) {
    let kind = match info.device_type {
        wgpu::DeviceType::DiscreteGpu => 0,
        wgpu::DeviceType::IntegratedGpu => 1,
        wgpu::DeviceType::VirtualGpu => 2,
        wgpu::DeviceType::Other => 3,
        wgpu::DeviceType::Cpu => 4,
    };
    let backend = match info.backend {
        wgpu::Backend::Vulkan | wgpu::Backend::Metal | wgpu::Backend::Dx12 => 0,
        _ => 1,
    };
    (kind, backend)
}
