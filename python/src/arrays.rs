//! NumPy arrays in and out: the checks on a field's array (type, dtype, rank,
//! layout, aliasing), its copy into a [`Buffer`], and a [`Buffer`] handed to
//! NumPy without a copy.

use numpy::PyArray1;
use numpy::{
    dtype_bound, Element, PyArrayDescrMethods, PyArrayDyn, PyArrayMethods, PyReadonlyArrayDyn,
    PyUntypedArray, PyUntypedArrayMethods,
};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use stencilc::exec::Buffer;
use stencilc::ir::ScalarType;

/// The NumPy dtype name of an SDSL type.
pub fn dtype_name(ty: ScalarType) -> &'static str {
    match ty {
        ScalarType::Int => "int32",
        ScalarType::Long => "int64",
        ScalarType::Float => "float32",
        ScalarType::Double => "float64",
    }
}

/// A field's array, checked: C-contiguous, of the field's dtype and its grid's
/// rank. Its shape is checked against the grid's sizes once they are known.
pub struct FieldArray<'py> {
    /// The array.
    pub array: Bound<'py, PyUntypedArray>,
    /// Its shape.
    pub shape: Vec<usize>,
}

impl FieldArray<'_> {
    /// First and one-past-last byte address, for the aliasing check.
    pub fn byte_range(&self) -> (usize, usize) {
        // SAFETY: reading the `data` pointer of a live array object.
        let start = unsafe { (*self.array.as_array_ptr()).data } as usize;
        let bytes = self.shape.iter().product::<usize>() * self.array.dtype().itemsize();
        (start, start + bytes)
    }
}

/// `object` as the array of field `name` of type `ty` on a grid of rank `rank`:
/// NumPy arrays are taken as they are (`stencilc.Program.run` turns objects with
/// the buffer protocol or DLPack into arrays without a copy beforehand).
pub fn field_array<'py>(
    object: &Bound<'py, PyAny>,
    name: &str,
    ty: ScalarType,
    rank: usize,
) -> PyResult<FieldArray<'py>> {
    let wanted = dtype_name(ty);
    let viewed;
    let object = if object.downcast::<PyUntypedArray>().is_ok() {
        object
    } else {
        viewed = as_numpy_view(object).unwrap_or_else(|_| object.clone());
        &viewed
    };
    let array = object.downcast::<PyUntypedArray>().map_err(|_| {
        PyTypeError::new_err(format!(
            "field `{name}` needs a NumPy array of dtype {wanted} (or an object with the buffer \
             protocol or __dlpack__), not a {}; convert it with numpy.asarray(x, dtype=numpy.{wanted})",
            object
                .get_type()
                .qualname()
                .map(|q| q.to_string())
                .unwrap_or_else(|_| "value of another type".into())
        ))
    })?;
    let shape = array.shape().to_vec();
    let dtype = array.dtype();
    let right_dtype = match ty {
        ScalarType::Int => dtype.is_equiv_to(&dtype_bound::<i32>(object.py())),
        ScalarType::Long => dtype.is_equiv_to(&dtype_bound::<i64>(object.py())),
        ScalarType::Float => dtype.is_equiv_to(&dtype_bound::<f32>(object.py())),
        ScalarType::Double => dtype.is_equiv_to(&dtype_bound::<f64>(object.py())),
    };
    if !right_dtype {
        let given = dtype.str().map(|s| s.to_string()).unwrap_or_default();
        return Err(PyTypeError::new_err(format!(
            "field `{name}` is `{ty}`: it needs an array of dtype {wanted}, not {given} \
             (nothing is converted silently); convert it with x.astype(numpy.{wanted})"
        )));
    }
    if shape.len() != rank {
        return Err(PyValueError::new_err(format!(
            "field `{name}` lives on a {rank}-D grid, but its array has {} dimension(s) (shape {}); \
             give a {rank}-D array of dtype {wanted}",
            shape.len(),
            shape_text(&shape)
        )));
    }
    if !array.is_c_contiguous() {
        return Err(PyValueError::new_err(format!(
            "the array of field `{name}` is not C-contiguous (a slice, a transpose or Fortran \
             order); pass numpy.ascontiguousarray(x)"
        )));
    }
    Ok(FieldArray {
        array: array.clone(),
        shape,
    })
}

/// A NumPy array viewing `object`'s memory: `numpy.from_dlpack` for objects
/// with `__dlpack__`, `numpy.asarray(memoryview(x))` for the buffer protocol.
/// Anything else (a list, say) is an error: it has no dtype to check.
fn as_numpy_view<'py>(object: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
    let py = object.py();
    let numpy = py.import_bound("numpy")?;
    if object.hasattr("__dlpack__")? {
        return numpy.call_method1("from_dlpack", (object,));
    }
    let view = py
        .import_bound("builtins")?
        .getattr("memoryview")?
        .call1((object,))?;
    numpy.call_method1("asarray", (view,))
}

/// `(2, 3)`, as Python prints a shape.
pub fn shape_text(shape: &[usize]) -> String {
    match shape {
        [one] => format!("({one},)"),
        _ => format!(
            "({})",
            shape
                .iter()
                .map(usize::to_string)
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}

/// The elements of a checked array, copied into a [`Buffer`] of type `ty`.
pub fn to_buffer(field: &FieldArray<'_>, ty: ScalarType) -> PyResult<Buffer> {
    fn copy<T: Element + Copy>(array: &Bound<'_, PyUntypedArray>) -> PyResult<Vec<T>> {
        let typed = array.downcast::<PyArrayDyn<T>>()?;
        let readonly = typed.try_readonly().map_err(|e| {
            PyValueError::new_err(format!(
                "an input array is being written elsewhere ({e}); wait for the writer or pass a copy"
            ))
        })?;
        Ok(readonly
            .as_slice()
            .map_err(|e| PyValueError::new_err(e.to_string()))?
            .to_vec())
    }
    Ok(match ty {
        ScalarType::Int => Buffer::Int(copy(&field.array)?),
        ScalarType::Long => Buffer::Long(copy(&field.array)?),
        ScalarType::Float => Buffer::Float(copy(&field.array)?),
        ScalarType::Double => Buffer::Double(copy(&field.array)?),
    })
}

/// A field's array held for reading while a run reads it in place: NumPy's
/// borrow flags keep other Rust code (rust-numpy users) from writing it
/// meanwhile.
pub enum ReadGuard<'py> {
    /// `int32`.
    Int(PyReadonlyArrayDyn<'py, i32>),
    /// `int64`.
    Long(PyReadonlyArrayDyn<'py, i64>),
    /// `float32`.
    Float(PyReadonlyArrayDyn<'py, f32>),
    /// `float64`.
    Double(PyReadonlyArrayDyn<'py, f64>),
}

impl ReadGuard<'_> {
    /// The address of the first element and the number of elements.
    pub fn data(&self) -> (*const u8, usize) {
        fn of<T: Element>(a: &PyReadonlyArrayDyn<'_, T>) -> (*const u8, usize) {
            (a.data().cast_const().cast(), a.len())
        }
        match self {
            ReadGuard::Int(a) => of(a),
            ReadGuard::Long(a) => of(a),
            ReadGuard::Float(a) => of(a),
            ReadGuard::Double(a) => of(a),
        }
    }
}

/// A checked array of type `ty` held for reading in place.
pub fn read_guard<'py>(field: &FieldArray<'py>, ty: ScalarType) -> PyResult<ReadGuard<'py>> {
    fn held<'py, T: Element>(
        array: &Bound<'py, PyUntypedArray>,
    ) -> PyResult<PyReadonlyArrayDyn<'py, T>> {
        array
            .downcast::<PyArrayDyn<T>>()?
            .try_readonly()
            .map_err(|e| {
                PyValueError::new_err(format!(
                    "an input array is being written elsewhere ({e}); wait for the writer or pass a copy"
                ))
            })
    }
    Ok(match ty {
        ScalarType::Int => ReadGuard::Int(held(&field.array)?),
        ScalarType::Long => ReadGuard::Long(held(&field.array)?),
        ScalarType::Float => ReadGuard::Float(held(&field.array)?),
        ScalarType::Double => ReadGuard::Double(held(&field.array)?),
    })
}

/// `buffer` as a NumPy array of shape `dims`; the array takes the memory
/// over (no copy).
pub fn to_numpy<'py>(
    py: Python<'py>,
    buffer: Buffer,
    dims: &[usize],
) -> PyResult<Bound<'py, PyAny>> {
    fn shaped<'py, T: Element>(
        py: Python<'py>,
        values: Vec<T>,
        dims: &[usize],
    ) -> PyResult<Bound<'py, PyAny>> {
        Ok(PyArray1::from_vec_bound(py, values)
            .reshape(dims.to_vec())?
            .into_any())
    }
    match buffer {
        Buffer::Int(v) => shaped(py, v, dims),
        Buffer::Long(v) => shaped(py, v, dims),
        Buffer::Float(v) => shaped(py, v, dims),
        Buffer::Double(v) => shaped(py, v, dims),
    }
}
