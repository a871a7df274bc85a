//! Task priorities: five levels, lower runs first.

use crate::ScheduleError;

/// The five priority levels of a [`FrameScheduler`](crate::FrameScheduler), drained in this order every step.
///
/// * `Kernel` is budget-exempt: it runs even on a saturated frame, because deferring the kernel's
///   own work (diagnostics, health reporting) would stall the thing doing the deferring.
/// * `Background` starves first: it only runs on spare budget. Work that must eventually run
///   belongs at `Low`.
///
/// Each level keeps its numeric value (`Kernel = 1 … Background = 5`, docs/kernel.md §2.1).
///
/// ```
/// use tickstep_kernel::Priority;
/// assert!(Priority::Kernel < Priority::Background);
/// assert_eq!(Priority::default(), Priority::Normal);
/// assert_eq!(Priority::High.level(), 2);
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[repr(u8)]
pub enum Priority {
    /// Kernel work: runs before everything and ignores the budget.
    Kernel = 1,
    /// Work that must run soon.
    High = 2,
    /// The default.
    #[default]
    Normal = 3,
    /// Work that may wait a few frames but must eventually run.
    Low = 4,
    /// Only on spare budget; starves first under overload.
    Background = 5,
}

impl Priority {
    /// Every priority, in drain order.
    ///
    /// ```
    /// use tickstep_kernel::Priority;
    /// assert_eq!(Priority::ALL[0], Priority::Kernel);
    /// assert_eq!(Priority::ALL.len(), 5);
    /// ```
    pub const ALL: [Priority; 5] = [
        Priority::Kernel,
        Priority::High,
        Priority::Normal,
        Priority::Low,
        Priority::Background,
    ];

    /// The numeric level, 1 (Kernel) to 5 (Background) (docs/kernel.md §2.1).
    ///
    /// ```
    /// assert_eq!(tickstep_kernel::Priority::Background.level(), 5);
    /// ```
    pub const fn level(self) -> u8 {
        self as u8
    }

    /// The index of this priority's queue (0 for Kernel).
    pub(crate) const fn queue(self) -> usize {
        self as usize - 1
    }

    /// The priority at an integer level, clamped to 1–5 (0 → Kernel, 9 → Background).
    ///
    /// ```
    /// use tickstep_kernel::Priority;
    /// assert_eq!(Priority::from_level(0), Priority::Kernel);
    /// assert_eq!(Priority::from_level(4), Priority::Low);
    /// assert_eq!(Priority::from_level(9), Priority::Background);
    /// ```
    pub const fn from_level(level: i64) -> Priority {
        match level {
            i64::MIN..=1 => Priority::Kernel,
            2 => Priority::High,
            3 => Priority::Normal,
            4 => Priority::Low,
            _ => Priority::Background,
        }
    }

    /// The priority for a number from a script or config: floored, then clamped to 1–5, so
    /// `2.5` runs at `High`, `0` at `Kernel` and `9` at `Background` (infinities clamp too).
    ///
    /// # Errors
    ///
    /// [`ScheduleError::InvalidPriority`] for NaN, which has no place in the order.
    ///
    /// ```
    /// use tickstep_kernel::Priority;
    /// assert_eq!(Priority::from_number(2.5), Ok(Priority::High));
    /// assert_eq!(Priority::from_number(0.0), Ok(Priority::Kernel));
    /// assert_eq!(Priority::from_number(9.0), Ok(Priority::Background));
    /// assert!(Priority::from_number(f64::NAN).is_err());
    /// ```
    pub fn from_number(value: f64) -> Result<Priority, ScheduleError> {
        if value.is_nan() {
            return Err(ScheduleError::InvalidPriority { value });
        }
        // Clamp before the cast so every finite or infinite value maps to 1..=5.
        let level = value.floor().clamp(1.0, 5.0) as i64;
        Ok(Priority::from_level(level))
    }
}

impl TryFrom<f64> for Priority {
    type Error = ScheduleError;

    /// Same as [`Priority::from_number`].
    ///
    /// ```
    /// use tickstep_kernel::Priority;
    /// assert_eq!(Priority::try_from(3.9), Ok(Priority::Normal));
    /// ```
    fn try_from(value: f64) -> Result<Self, Self::Error> {
        Priority::from_number(value)
    }
}
