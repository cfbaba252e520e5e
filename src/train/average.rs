//! The mean of networks of one shape, weight by weight.
//!
//! An n-tuple network's value of a board is a sum of its weights, so it is linear in them: the network whose every
//! weight is the mean of the networks' weights values every board at the mean of their values. Averaging is an
//! ensemble of value functions at the cost of one network, in time and in size (whether it plays better is a
//! measurement: docs/training.md has the one made).

use super::compare::ShapeMismatch;
use crate::eval::ntuple::{huge_page_vec, Network};

/// Networks that cannot be averaged.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AverageError {
    #[error("no networks to average")]
    Empty,
    #[error("network {index} (counting from 1) cannot be averaged with the first: {mismatch}")]
    Shape { index: usize, mismatch: ShapeMismatch },
}

/// The network whose every weight is the mean of that weight in `nets` (summed in f64, stored as f32; f16 networks
/// are widened first).
pub fn average(nets: &[Network]) -> Result<Network, AverageError> {
    let first = nets.first().ok_or(AverageError::Empty)?;
    for (i, net) in nets.iter().enumerate().skip(1) {
        ShapeMismatch::check(first, net).map_err(|mismatch| AverageError::Shape { index: i + 1, mismatch })?;
    }
    let shape = first.shape();
    let n = shape.weight_count();
    let mut sum: Vec<f64> = vec![0.0; n];
    for net in nets {
        for (s, &w) in sum.iter_mut().zip(net.weights().iter()) {
            *s += f64::from(w);
        }
    }
    let count = nets.len() as f64;
    let mut weights = huge_page_vec(n);
    weights.extend(sum.into_iter().map(|s| (s / count) as f32));
    Ok(Network::from_weights(shape.clone(), weights).expect("one mean for each weight of the shape"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::Board;
    use crate::eval::ntuple::Shape;

    fn random_net(shape: &Shape, seed: u64) -> Network {
        let mut rng = crate::engine::rng::Rng::new(seed);
        let weights = (0..shape.weight_count())
            .map(|_| (rng.next_u64() % 2001) as f32 - 1000.0)
            .collect();
        Network::from_weights(shape.clone(), weights).expect("weight count of the shape")
    }

    #[test]
    fn the_mean_network_values_every_board_at_the_mean_of_the_values() {
        let shape = Shape::new(vec![vec![0, 1, 2], vec![4, 5, 6]], vec![0, 11]).expect("a valid shape");
        let nets: Vec<Network> = (1..=3).map(|s| random_net(&shape, s)).collect();
        let mean = average(&nets).expect("one shape");
        let mut rng = crate::engine::rng::Rng::new(9);
        for _ in 0..200 {
            let board = Board(rng.next_u64() & 0x7777_7777_7777_7777);
            let t = board.transpose();
            let expected = nets.iter().map(|n| n.value(board, t)).sum::<f64>() / 3.0;
            let got = mean.value(board, t);
            assert!((got - expected).abs() < 1e-3, "{board:?}: {got} against {expected}");
        }
        let w = mean.weights();
        let (a, b, c) = (nets[0].weights(), nets[1].weights(), nets[2].weights());
        assert_eq!(w[17], (a[17] + b[17] + c[17]) / 3.0);
    }

    #[test]
    fn networks_of_different_shapes_are_refused_by_position() {
        let a = Shape::new(vec![vec![0, 1, 2]], vec![0]).expect("a valid shape");
        let b = Shape::new(vec![vec![0, 1, 3]], vec![0]).expect("a valid shape");
        let nets = [random_net(&a, 1), random_net(&a, 2), random_net(&b, 3)];
        match average(&nets) {
            Err(AverageError::Shape { index: 3, .. }) => {}
            other => panic!("expected the third network refused, got {:?}", other.map(|_| ())),
        }
        assert!(matches!(average(&[]), Err(AverageError::Empty)));
    }
}
